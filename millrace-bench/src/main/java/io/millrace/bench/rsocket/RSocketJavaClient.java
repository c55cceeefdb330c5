package io.millrace.bench.rsocket;

import static io.millrace.bench.rsocket.RSocketJavaSystem.HOST;
import static io.millrace.bench.rsocket.RSocketJavaSystem.TIMEOUT;

import io.millrace.bench.BenchClient;
import io.millrace.transport.netty.EventLoops;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.frame.decoder.PayloadDecoder;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.util.ByteBufPayload;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.resources.LoopResources;
import reactor.netty.tcp.TcpClient;

/**
 * The rsocket-java client: one {@link RSocketConnector} connection over a reactor-netty {@code
 * TcpClient} on one event-loop thread ({@code LoopResources.create("rsocket-client", 1, true)},
 * native epoll), {@link PayloadDecoder#ZERO_COPY}, outgoing payloads zero-copy slices of one
 * pre-filled buffer (see {@link RSocketJavaSystem} for the settings common to both sides).
 *
 * <p>Flow control. In rsocket-java (as in Reactive Streams) request-n is a count of payloads and
 * {@code Long.MAX_VALUE} (sent on the wire as 2^31-1) means unbounded; a well-behaved consumer
 * requests in batches instead:
 *
 * <ul>
 *   <li>request-stream and request-channel (inbound echoes): the subscriber requests {@value
 *       #WINDOW} payloads at first and {@value #BATCH} more each time {@value #BATCH} have arrived,
 *       so between {@value #WINDOW} - {@value #BATCH} and {@value #WINDOW} are always outstanding
 *       (the pipe never drains while a REQUEST_N frame travels) and a REQUEST_N frame goes out once
 *       per {@value #BATCH} payloads. This is what {@code limitRate(1024, 256)} would do, without
 *       the operator's queue. Every payload is released as it arrives.
 *   <li>request-channel (outbound): a {@link Flux#generate} that makes a payload only when
 *       rsocket-java requests one, i.e. within the credit the server's REQUEST_N frames grant; the
 *       server echoes through a plain {@code map}, so its credit is the echo demand above.
 *   <li>request-response: each call is one {@code requestResponse} Mono subscribed by a small
 *       {@link CoreSubscriber} that releases the response and then runs the callback; rsocket-java
 *       allocates stream ids and queues frames thread-safely, so calls may come from the callback
 *       (the event loop) or from any other thread.
 * </ul>
 *
 * <p>Fire-and-forget. rsocket-java's {@code fireAndForget} Mono completes inside {@code subscribe},
 * as soon as the REQUEST_FNF frame has been put into the connection's send queue (an unbounded
 * {@code UnboundedProcessor}); it says nothing about the frame having reached Netty or the socket.
 * The queue is drained into the Netty channel by reactor-netty's {@code send}, which keeps at most
 * 128 writes unacknowledged by the socket. A window on completions alone would therefore bound
 * nothing (every Mono completes at once and the queue grows without limit). So the client counts
 * the REQUEST_FNF frames that leave the queue for the Netty pipeline (a handler at the head of the
 * pipeline sees each write) and keeps at most {@value #FNF_WINDOW} frames issued but not yet handed
 * to Netty: it issues on the event loop until the window is full, then waits for the count of
 * handed-off frames to bring it down to half the window. Each completed {@code fireAndForget} Mono
 * increments {@code sent}; at any time {@code sent} is at most {@value #FNF_WINDOW} ahead of what
 * Netty has taken, and Netty holds at most about 128 more.
 */
final class RSocketJavaClient implements BenchClient {
  /** Payloads requested up front on a stream or channel. */
  static final int WINDOW = 1024;

  /** Payloads requested each time as many have arrived. */
  static final int BATCH = 256;

  /** Fire-and-forget frames at most issued but not yet handed to Netty. */
  static final int FNF_WINDOW = 1024;

  private final RSocket rsocket;
  private final Channel channel;
  private final LoopResources loops;
  private final ByteBuf data;
  private final AtomicBoolean closed = new AtomicBoolean();
  private final AtomicReference<Subscription> stream = new AtomicReference<>();
  private final AtomicReference<Subscription> channelInbound = new AtomicReference<>();
  private final AtomicBoolean errorReported = new AtomicBoolean();

  private RSocketJavaClient(RSocket rsocket, Channel channel, LoopResources loops, ByteBuf data) {
    this.rsocket = rsocket;
    this.channel = channel;
    this.loops = loops;
    this.data = data;
  }

  static RSocketJavaClient connect(int port, int payloadSize)
      throws InterruptedException, ExecutionException, TimeoutException {
    LoopResources loops = LoopResources.create("rsocket-client", 1, true);
    ByteBuf data = RSocketJavaSystem.filled(payloadSize);
    // reactor-netty may hand the connection to rsocket-java (and the RSocket to us) before it runs
    // doOnConnected callbacks, so wait for the channel separately.
    CompletableFuture<Channel> channel = new CompletableFuture<>();
    try {
      TcpClient tcp =
          TcpClient.create()
              .host(HOST)
              .port(port)
              .runOn(loops, EventLoops.epoll())
              .doOnConnected(connection -> channel.complete(connection.channel()));
      RSocket rsocket =
          RSocketConnector.create()
              .payloadDecoder(PayloadDecoder.ZERO_COPY)
              .connect(TcpClientTransport.create(tcp))
              .block(TIMEOUT);
      if (rsocket == null) {
        throw new IllegalStateException("rsocket-java client did not connect to port " + port);
      }
      return new RSocketJavaClient(
          rsocket, channel.get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), loops, data);
    } catch (RuntimeException | InterruptedException | ExecutionException | TimeoutException e) {
      RSocketJavaSystem.disposeLoops(loops);
      data.release();
      throw e;
    }
  }

  private Payload payload() {
    return ByteBufPayload.create(data.retainedSlice());
  }

  @Override
  public void requestResponse(Runnable onResponse) {
    rsocket.requestResponse(payload()).subscribe(new ResponseSubscriber(onResponse, null));
  }

  @Override
  public void requestResponse(Runnable onResponse, Runnable onFailure) {
    rsocket.requestResponse(payload()).subscribe(new ResponseSubscriber(onResponse, onFailure));
  }

  @Override
  public void startFireAndForget(LongAdder sent) {
    FireAndForgetDriver driver = new FireAndForgetDriver(sent);
    channel
        .eventLoop()
        .execute(
            () -> {
              channel.pipeline().addFirst("bench-fnf-window", driver);
              driver.run();
            });
  }

  @Override
  public void startStream(LongAdder received) {
    rsocket.requestStream(payload()).subscribe(new CountingSubscriber(received, stream));
  }

  @Override
  public void startChannel(LongAdder received) {
    Flux<Payload> outbound = Flux.generate(sink -> sink.next(payload()));
    rsocket.requestChannel(outbound).subscribe(new CountingSubscriber(received, channelInbound));
  }

  @Override
  public java.util.concurrent.ScheduledExecutorService eventLoop() {
    return channel.eventLoop();
  }

  @Override
  public void close() {
    if (!closed.compareAndSet(false, true)) {
      return;
    }
    try {
      cancel(stream);
      cancel(channelInbound);
      rsocket.dispose();
      rsocket.onClose().onErrorResume(e -> Mono.empty()).block(TIMEOUT);
    } finally {
      RSocketJavaSystem.disposeLoops(loops);
      data.release();
    }
  }

  private static void cancel(AtomicReference<Subscription> subscription) {
    Subscription s = subscription.get();
    if (s != null) {
      s.cancel();
    }
  }

  private void failed(String what, Throwable error) {
    if (!closed.get() && errorReported.compareAndSet(false, true)) {
      System.err.println("rsocket-java " + what + " failed: " + error);
      error.printStackTrace();
    }
  }

  /** Releases the response, then runs the callback. */
  private final class ResponseSubscriber implements CoreSubscriber<Payload> {
    private final Runnable onResponse;
    private final Runnable onFailure; // null: only reported

    ResponseSubscriber(Runnable onResponse, Runnable onFailure) {
      this.onResponse = onResponse;
      this.onFailure = onFailure;
    }

    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Payload response) {
      response.release();
      onResponse.run();
    }

    @Override
    public void onError(Throwable error) {
      failed("request-response", error);
      if (onFailure != null) {
        onFailure.run();
      }
    }

    @Override
    public void onComplete() {}
  }

  /**
   * Consumes a stream or a channel's echoes: requests {@link #WINDOW}, then {@link #BATCH} per
   * {@link #BATCH} received; releases and counts every payload. Signals arrive serially (on the
   * event loop), so the batch counter needs no synchronisation.
   */
  private final class CountingSubscriber implements CoreSubscriber<Payload> {
    private final LongAdder received;
    private final AtomicReference<Subscription> holder;
    private Subscription subscription;
    private int sinceRequest;

    CountingSubscriber(LongAdder received, AtomicReference<Subscription> holder) {
      this.received = received;
      this.holder = holder;
    }

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
      holder.set(s);
      s.request(WINDOW);
    }

    @Override
    public void onNext(Payload p) {
      p.release();
      received.increment();
      if (++sinceRequest == BATCH) {
        sinceRequest = 0;
        subscription.request(BATCH);
      }
    }

    @Override
    public void onError(Throwable error) {
      failed("stream or channel", error);
    }

    @Override
    public void onComplete() {
      failed("stream or channel", new IllegalStateException("completed; should be endless"));
    }
  }

  /**
   * Issues fire-and-forget on the event loop, keeping at most {@link #FNF_WINDOW} REQUEST_FNF
   * frames issued but not yet written into the Netty pipeline (see the class comment). As a handler
   * at the head of the pipeline it sees every frame Netty is given; as a subscriber it counts
   * completed {@code fireAndForget} Monos. All its state is touched on the event loop only.
   */
  private final class FireAndForgetDriver extends ChannelOutboundHandlerAdapter
      implements Runnable, CoreSubscriber<Void> {
    /** The frame type of REQUEST_FNF (RSocket protocol, frame header). */
    private static final int REQUEST_FNF = 0x05;

    /** After the 3-byte length prefix and the 4-byte stream id: 6 bits of type, 10 of flags. */
    private static final int TYPE_OFFSET = 7;

    private final LongAdder sent;
    private long issued;
    private long handedOff;
    private boolean scheduledOrRunning;

    FireAndForgetDriver(LongAdder sent) {
      this.sent = sent;
    }

    @Override
    public void run() {
      scheduledOrRunning = true;
      // At most one window per task, so the event loop gets back to I/O even if Netty takes frames
      // as fast as they come.
      for (int budget = FNF_WINDOW; budget > 0 && issued - handedOff < FNF_WINDOW; budget--) {
        if (closed.get()) {
          return;
        }
        issued++;
        rsocket.fireAndForget(payload()).subscribe(this);
      }
      if (issued - handedOff < FNF_WINDOW) {
        channel.eventLoop().execute(this);
      } else {
        scheduledOrRunning = false;
      }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
      if (msg instanceof ByteBuf frame
          && frame.readableBytes() > TYPE_OFFSET
          && frame.getUnsignedByte(frame.readerIndex() + TYPE_OFFSET) >>> 2 == REQUEST_FNF) {
        handedOff++;
        if (!scheduledOrRunning && issued - handedOff <= FNF_WINDOW / 2) {
          scheduledOrRunning = true;
          ctx.executor().execute(this);
        }
      }
      ctx.write(msg, promise);
    }

    @Override
    public void onSubscribe(Subscription s) {}

    @Override
    public void onNext(Void unused) {}

    @Override
    public void onError(Throwable error) {
      failed("fire-and-forget", error);
    }

    @Override
    public void onComplete() {
      sent.increment();
    }
  }
}
