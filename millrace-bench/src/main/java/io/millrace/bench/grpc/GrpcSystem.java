package io.millrace.bench.grpc;

import io.grpc.CallOptions;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.millrace.bench.BenchClient;
import io.millrace.bench.BenchServer;
import io.millrace.bench.BenchSystem;
import io.millrace.bench.IdleConnections;
import io.millrace.transport.netty.EventLoops;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.SingleThreadEventLoop;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.net.InetSocketAddress;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * grpc-java at the "core" level: hand-made {@link MethodDescriptor}s of service {@code bench.Bench}
 * with a {@code byte[]} marshaller ({@link BytesMarshaller}), no protobuf, through the stub
 * utilities ({@link ClientCalls}, {@link ServerCalls}) that generated async stubs use.
 *
 * <p>Settings, on both sides unless said otherwise:
 *
 * <ul>
 *   <li>Netty transport ({@code io.grpc.netty}, not the shaded one), plaintext HTTP/2 (prior
 *       knowledge), native epoll where {@link EventLoops#epoll()} says so, NIO otherwise.
 *   <li>Exactly one event-loop thread per side: the server uses one single-thread group as both its
 *       boss and its worker group; the client channel uses its own single-thread group.
 *   <li>{@code directExecutor()} on the server and on the channel: application callbacks run on the
 *       event loop, as they do for the other systems.
 *   <li>HTTP/2 flow-control window 1,000,000 bytes (stream and connection), fixed: set with {@code
 *       flowControlWindow(int)}, which turns BDP auto-tuning off ({@code
 *       initialFlowControlWindow(int)} would set the same initial window but keep BDP pings on; the
 *       later of the two calls wins, so only one is made).
 *   <li>Retries disabled ({@code disableRetry()}): no retry buffering of outbound messages.
 *   <li>Max inbound message size 16 MiB; no compression; no interceptors, tracers or census.
 *   <li>grpc-java's default on-ready threshold (32 KiB of queued outbound bytes per stream).
 *   <li>The client's senders (fire-and-forget, request-channel) send their bursts after the event
 *       loop's current round of tasks instead of inline in the on-ready callback, so the loop keeps
 *       reading its socket (see {@code Client.Sender}: Netty 4.2.18 otherwise starves reads for up
 *       to a second at a time).
 * </ul>
 *
 * <p>Interactions:
 *
 * <ul>
 *   <li>request-response: a UNARY call per request, started with {@link ClientCalls#asyncUnaryCall}
 *       (what an async stub does); {@code onResponse} runs when the call completes successfully
 *       (response and OK trailers received).
 *   <li>fire-and-forget: gRPC has no fire-and-forget, so it maps to one CLIENT_STREAMING call that
 *       never half-closes: the client sends while {@code isReady()} and resumes from the on-ready
 *       handler (queued bytes stay bounded by the on-ready threshold plus one message); the server
 *       counts each message and uses grpc-java's default automatic inbound flow control (one more
 *       message requested after each delivered), so the HTTP/2 window is returned as it consumes.
 *   <li>request-stream: one endless SERVER_STREAMING call; the server sends while {@code isReady()}
 *       from its on-ready handler. The client disables automatic inbound flow control and requests
 *       messages in batches of {@link #BATCH} (256 first, 256 more each time 256 arrived), as the
 *       other systems' clients do in this harness. In grpc-java these requests are local (they let
 *       the deframer deliver); what goes on the wire is the HTTP/2 window update.
 *   <li>request-channel: one endless BIDI_STREAMING call; the client sends while {@code isReady()}
 *       and consumes echoes in batches like request-stream; the server echoes each message with
 *       manual inbound flow control (grpc-java's {@code ManualFlowControlServer} pattern): it asks
 *       for one more message only while its outbound side is ready, and otherwise waits for its
 *       on-ready handler, so the echo never queues without bound.
 * </ul>
 */
public final class GrpcSystem implements BenchSystem {
  static final String SERVICE = "bench.Bench";

  /** Inbound messages a streaming client requests at a time. */
  static final int BATCH = 256;

  static final int FLOW_CONTROL_WINDOW = 1_000_000;

  static final int MAX_INBOUND_MESSAGE_SIZE = 16 * 1024 * 1024;

  /** The four methods of a service, with how their messages are marshalled. */
  record Methods(
      String service,
      MethodDescriptor<byte[], byte[]> requestResponse,
      MethodDescriptor<byte[], byte[]> fireAndForget,
      MethodDescriptor<byte[], byte[]> requestStream,
      MethodDescriptor<byte[], byte[]> requestChannel) {

    static Methods of(String service, MethodDescriptor.Marshaller<byte[]> marshaller) {
      return new Methods(
          service,
          method(service, marshaller, MethodDescriptor.MethodType.UNARY, "requestResponse"),
          method(
              service, marshaller, MethodDescriptor.MethodType.CLIENT_STREAMING, "fireAndForget"),
          method(
              service, marshaller, MethodDescriptor.MethodType.SERVER_STREAMING, "requestStream"),
          method(
              service, marshaller, MethodDescriptor.MethodType.BIDI_STREAMING, "requestChannel"));
    }

    private static MethodDescriptor<byte[], byte[]> method(
        String service,
        MethodDescriptor.Marshaller<byte[]> marshaller,
        MethodDescriptor.MethodType type,
        String name) {
      return MethodDescriptor.newBuilder(marshaller, marshaller)
          .setType(type)
          .setFullMethodName(MethodDescriptor.generateFullMethodName(service, name))
          .build();
    }
  }

  /** Raw bytes, no protobuf: the "core" level. */
  static final Methods BYTES = Methods.of(SERVICE, BytesMarshaller.INSTANCE);

  private final String name;
  private final Methods methods;

  /** The server is Millrace RPC behind its gRPC endpoint, not grpc-java's server. */
  private final boolean millraceEndpoint;

  public GrpcSystem() {
    this("grpc-java", BYTES, false);
  }

  GrpcSystem(String name, Methods methods, boolean millraceEndpoint) {
    this.name = name;
    this.methods = methods;
    this.millraceEndpoint = millraceEndpoint;
  }

  /**
   * grpc-java-rpc's client against Millrace RPC's bench service served through Millrace's gRPC
   * endpoint ({@code GrpcEndpoint}, grpc-java's Netty server with the same settings as here: one
   * event loop, the same flow-control window and message limit, direct executor): what gRPC clients
   * get from a Millrace service. Fire-and-forget is not measured: the bench service's Send is
   * Millrace's fire-and-forget, which gRPC clients call as a unary method.
   */
  public static GrpcSystem millraceEndpoint() {
    String service = "millrace.bench.v1.BenchService";
    BenchMessageMarshaller m = new BenchMessageMarshaller();
    return new GrpcSystem(
        "grpc-java-to-millrace",
        new Methods(
            service,
            Methods.method(service, m, MethodDescriptor.MethodType.UNARY, "Echo"),
            Methods.method(service, m, MethodDescriptor.MethodType.CLIENT_STREAMING, "Send"),
            Methods.method(service, m, MethodDescriptor.MethodType.SERVER_STREAMING, "Stream"),
            Methods.method(service, m, MethodDescriptor.MethodType.BIDI_STREAMING, "Channel")),
        true);
  }

  @Override
  public boolean supports(io.millrace.bench.Interaction interaction) {
    return !millraceEndpoint || interaction != io.millrace.bench.Interaction.FIRE_AND_FORGET;
  }

  /**
   * grpc-java at the RPC level: bench.proto's BenchMessage on the wire both ways, marshalled by
   * grpc-protobuf's {@code ProtoUtils} as generated stubs marshal it (the harness's byte[] is the
   * message's payload field).
   */
  public static GrpcSystem rpcLevel() {
    return new GrpcSystem(
        "grpc-java-rpc",
        Methods.of("millrace.bench.v1.BenchService", new BenchMessageMarshaller()),
        false);
  }

  @Override
  public String name() {
    return name;
  }

  static byte[] payload(int size) {
    byte[] payload = new byte[size];
    for (int i = 0; i < size; i++) {
      payload[i] = (byte) i;
    }
    return payload;
  }

  private static Class<? extends ServerChannel> serverChannelType() {
    return EventLoops.epoll() ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
  }

  private static Class<? extends Channel> clientChannelType() {
    return EventLoops.epoll() ? EpollSocketChannel.class : NioSocketChannel.class;
  }

  /**
   * A server on 127.0.0.1:{@code port} with the harness's settings (the channel type, {@code group}
   * as boss and worker, the flow-control window, the message limit); the caller adds services and
   * the executor.
   */
  public static NettyServerBuilder serverBuilder(int port, EventLoopGroup group) {
    return NettyServerBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
        .channelType(serverChannelType())
        .bossEventLoopGroup(group)
        .workerEventLoopGroup(group)
        .flowControlWindow(FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_SIZE);
  }

  /**
   * A plaintext channel to 127.0.0.1:{@code port} on {@code group} with the harness's settings
   * (direct executor, no retries, the flow-control window, the message limit).
   */
  public static NettyChannelBuilder channelBuilder(int port, EventLoopGroup group) {
    return NettyChannelBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
        .channelType(clientChannelType())
        .eventLoopGroup(group)
        .directExecutor()
        .usePlaintext()
        .disableRetry()
        .flowControlWindow(FLOW_CONTROL_WINDOW)
        .maxInboundMessageSize(MAX_INBOUND_MESSAGE_SIZE);
  }

  public static void shutdown(EventLoopGroup group) {
    group.shutdownGracefully(0, 5, TimeUnit.SECONDS).awaitUninterruptibly(10, TimeUnit.SECONDS);
  }

  private static boolean isCancellation(Throwable t) {
    return Status.fromThrowable(t).getCode() == Status.Code.CANCELLED;
  }

  // ---------------------------------------------------------------------------------------------
  // Server

  @Override
  public BenchServer startServer(int port, int payloadSize, LongAdder handled) throws Exception {
    return startServer(port, payloadSize, handled, false);
  }

  /** The idle-connections server: pings from clients allowed every 10 s, with or without calls. */
  @Override
  public BenchServer startIdleServer(int port) throws Exception {
    return startServer(port, 8, new LongAdder(), true);
  }

  private BenchServer startServer(int port, int payloadSize, LongAdder handled, boolean idle)
      throws Exception {
    if (millraceEndpoint) {
      return startMillraceEndpoint(port, payloadSize, handled);
    }
    byte[] response = payload(payloadSize);
    ServerServiceDefinition service =
        ServerServiceDefinition.builder(methods.service())
            .addMethod(
                methods.requestResponse(),
                ServerCalls.asyncUnaryCall(
                    (request, observer) -> {
                      observer.onNext(response);
                      observer.onCompleted();
                      handled.increment();
                    }))
            .addMethod(
                methods.fireAndForget(),
                ServerCalls.asyncClientStreamingCall(observer -> new Sink(observer, handled)))
            .addMethod(
                methods.requestStream(),
                ServerCalls.asyncServerStreamingCall(
                    (request, observer) ->
                        new Source((ServerCallStreamObserver<byte[]>) observer, response, handled)))
            .addMethod(
                methods.requestChannel(),
                ServerCalls.asyncBidiStreamingCall(
                    observer -> new Echo((ServerCallStreamObserver<byte[]>) observer, handled)))
            .build();

    EventLoopGroup group = EventLoops.newGroup(1, "grpc-server");
    Server server;
    try {
      NettyServerBuilder builder = serverBuilder(port, group).directExecutor().addService(service);
      if (idle) {
        builder.permitKeepAliveTime(10, TimeUnit.SECONDS).permitKeepAliveWithoutCalls(true);
      }
      server = builder.build().start();
    } catch (Exception | Error e) {
      shutdown(group);
      throw e;
    }
    return () -> {
      server.shutdownNow();
      try {
        server.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        shutdown(group);
      }
    };
  }

  private static BenchServer startMillraceEndpoint(int port, int payloadSize, LongAdder handled) {
    EventLoopGroup group = EventLoops.newGroup(1, "grpc-server");
    io.millrace.grpc.GrpcEndpoint endpoint;
    try {
      endpoint =
          io.millrace.grpc.GrpcEndpoint.builder(
                  io.millrace.bench.millrace.MillraceRpcSystem.benchServer(payloadSize, handled))
              .address(new InetSocketAddress("127.0.0.1", port))
              .eventLoops(group)
              .health(false)
              .reflection(false)
              .configure(
                  b ->
                      b.flowControlWindow(FLOW_CONTROL_WINDOW)
                          .maxInboundMessageSize(MAX_INBOUND_MESSAGE_SIZE))
              .start();
    } catch (RuntimeException | Error e) {
      shutdown(group);
      throw e;
    }
    return () -> {
      endpoint.close(java.time.Duration.ZERO);
      shutdown(group);
    };
  }

  /** Fire-and-forget, server side: counts every message (automatic inbound flow control). */
  private static final class Sink implements StreamObserver<byte[]> {
    private final StreamObserver<byte[]> responses;
    private final LongAdder handled;

    Sink(StreamObserver<byte[]> responses, LongAdder handled) {
      this.responses = responses;
      this.handled = handled;
    }

    @Override
    public void onNext(byte[] message) {
      handled.increment();
    }

    @Override
    public void onError(Throwable t) {
      // The client cancels the call when it closes.
    }

    @Override
    public void onCompleted() {
      responses.onNext(new byte[0]);
      responses.onCompleted();
    }
  }

  /** Request-stream, server side: an endless stream sent while the call is ready. */
  private static final class Source implements Runnable {
    private final ServerCallStreamObserver<byte[]> out;
    private final byte[] response;
    private final LongAdder handled;
    private boolean cancelled;

    Source(ServerCallStreamObserver<byte[]> out, byte[] response, LongAdder handled) {
      this.out = out;
      this.response = response;
      this.handled = handled;
      out.setOnCancelHandler(() -> cancelled = true);
      out.setOnReadyHandler(this);
    }

    @Override
    public void run() {
      while (!cancelled && out.isReady()) {
        out.onNext(response);
        handled.increment();
      }
    }
  }

  /**
   * Request-channel, server side: echoes each message, requesting the next one only while its own
   * outbound side is ready.
   */
  private static final class Echo implements StreamObserver<byte[]>, Runnable {
    private final ServerCallStreamObserver<byte[]> out;
    private final LongAdder handled;
    private boolean requesting;
    private boolean done;

    Echo(ServerCallStreamObserver<byte[]> out, LongAdder handled) {
      this.out = out;
      this.handled = handled;
      out.disableAutoRequest();
      out.setOnCancelHandler(() -> done = true);
      out.setOnReadyHandler(this);
    }

    /** On ready: resume reading if reading had stopped. */
    @Override
    public void run() {
      if (!done && !requesting && out.isReady()) {
        requesting = true;
        out.request(1);
      }
    }

    @Override
    public void onNext(byte[] message) {
      if (done) {
        return;
      }
      out.onNext(message);
      handled.increment();
      if (out.isReady()) {
        out.request(1);
      } else {
        requesting = false;
      }
    }

    @Override
    public void onError(Throwable t) {
      done = true;
    }

    @Override
    public void onCompleted() {
      if (!done) {
        done = true;
        out.onCompleted();
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Client

  @Override
  public BenchClient connect(int port, int payloadSize) throws Exception {
    EventLoopGroup group = EventLoops.newGroup(1, "grpc-client");
    ManagedChannel channel;
    try {
      channel = channelBuilder(port, group).build();
    } catch (RuntimeException | Error e) {
      shutdown(group);
      throw e;
    }
    Client client = new Client(group, channel, payload(payloadSize), methods);
    try {
      awaitReady(channel, 10, TimeUnit.SECONDS);
    } catch (Exception | Error e) {
      client.close();
      throw e;
    }
    return client;
  }

  /**
   * Idle connections: one {@link ManagedChannel} per connection (a channel is one HTTP/2
   * connection), all on one client event loop, HTTP/2 PING every {@code keepAliveSeconds} even
   * without calls. Source addresses are left to the kernel (grpc-java picks them per channel only
   * through an experimental API).
   */
  @Override
  public IdleConnections openIdle(
      int port,
      int count,
      int keepAliveSeconds,
      java.util.function.IntFunction<InetSocketAddress> localAddress)
      throws Exception {
    EventLoopGroup group = EventLoops.newGroup(1, "grpc-idle");
    java.util.List<ManagedChannel> channels = new java.util.ArrayList<>(count);
    java.util.function.Supplier<ManagedChannel> newChannel =
        () ->
            NettyChannelBuilder.forAddress(new InetSocketAddress("127.0.0.1", port))
                .channelType(clientChannelType())
                .eventLoopGroup(group)
                .directExecutor()
                .usePlaintext()
                .disableRetry()
                .keepAliveTime(keepAliveSeconds, TimeUnit.SECONDS)
                .keepAliveWithoutCalls(true)
                .build();
    try {
      for (int start = 0; start < count; start += 256) {
        java.util.List<ManagedChannel> batch = new java.util.ArrayList<>();
        for (int i = start; i < Math.min(count, start + 256); i++) {
          ManagedChannel channel = newChannel.get();
          channel.getState(true);
          batch.add(channel);
          channels.add(channel);
        }
        for (ManagedChannel channel : batch) {
          awaitReady(channel, 60, TimeUnit.SECONDS);
        }
      }
    } catch (Exception | Error e) {
      channels.forEach(ManagedChannel::shutdownNow);
      shutdown(group);
      throw e;
    }
    byte[] probe = payload(8);
    return new IdleConnections() {
      @Override
      public int open() {
        int n = 0;
        for (ManagedChannel channel : channels) {
          if (channel.getState(false) == ConnectivityState.READY) {
            n++;
          }
        }
        return n;
      }

      @Override
      public long probeMicros() throws Exception {
        long start = System.nanoTime();
        ManagedChannel fresh = newChannel.get();
        try {
          ClientCalls.blockingUnaryCall(
              fresh, methods.requestResponse(), CallOptions.DEFAULT, probe);
          return TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - start);
        } finally {
          fresh.shutdownNow();
        }
      }

      @Override
      public void close() {
        channels.forEach(ManagedChannel::shutdownNow);
        shutdown(group);
      }
    };
  }

  /** Connects the channel and waits until it is READY. */
  public static void awaitReady(ManagedChannel channel, long timeout, TimeUnit unit)
      throws Exception {
    long deadline = System.nanoTime() + unit.toNanos(timeout);
    ConnectivityState state;
    while ((state = channel.getState(true)) != ConnectivityState.READY) {
      if (state == ConnectivityState.SHUTDOWN) {
        throw new IllegalStateException("gRPC channel shut down while connecting");
      }
      CountDownLatch changed = new CountDownLatch(1);
      channel.notifyWhenStateChanged(state, changed::countDown);
      long left = deadline - System.nanoTime();
      if (left <= 0 || !changed.await(left, TimeUnit.NANOSECONDS)) {
        throw new IllegalStateException(
            "gRPC channel not READY in time (last state " + state + ")");
      }
    }
  }

  /** The client side; callbacks run on the channel's event loop (direct executor). */
  static final class Client implements BenchClient {
    private final EventLoopGroup group;
    private final SingleThreadEventLoop eventLoop;
    private final ManagedChannel channel;
    private final byte[] payload;
    private final Methods methods;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final LongAdder errors = new LongAdder();
    private volatile boolean closing;

    Client(EventLoopGroup group, ManagedChannel channel, byte[] payload, Methods methods) {
      this.methods = methods;
      this.group = group;
      this.eventLoop = (SingleThreadEventLoop) group.next(); // the group's only loop
      this.channel = channel;
      this.payload = payload;
    }

    /** Calls that failed for another reason than this client closing. */
    long errors() {
      return errors.sum();
    }

    void error(Throwable t) {
      if (closing) {
        return;
      }
      if (errors.sum() == 0) {
        System.err.println("grpc-java client: call failed: " + Status.fromThrowable(t));
      }
      errors.increment();
    }

    @Override
    public void requestResponse(Runnable onResponse) {
      requestResponse(onResponse, null);
    }

    @Override
    public void requestResponse(Runnable onResponse, Runnable onFailure) {
      ClientCalls.asyncUnaryCall(
          channel.newCall(methods.requestResponse(), CallOptions.DEFAULT),
          payload,
          new StreamObserver<byte[]>() {
            @Override
            public void onNext(byte[] response) {}

            @Override
            public void onError(Throwable t) {
              error(t);
              if (onFailure != null) {
                onFailure.run();
              }
            }

            @Override
            public void onCompleted() {
              onResponse.run();
            }
          });
    }

    @Override
    public void startFireAndForget(LongAdder sent) {
      ClientCalls.asyncClientStreamingCall(
          channel.newCall(methods.fireAndForget(), CallOptions.DEFAULT), new Sender(sent, null));
    }

    @Override
    public void startStream(LongAdder received) {
      ClientCalls.asyncServerStreamingCall(
          channel.newCall(methods.requestStream(), CallOptions.DEFAULT),
          payload,
          new BatchingConsumer(received));
    }

    @Override
    public void startChannel(LongAdder received) {
      ClientCalls.asyncBidiStreamingCall(
          channel.newCall(methods.requestChannel(), CallOptions.DEFAULT),
          new Sender(null, received));
    }

    @Override
    public java.util.concurrent.ScheduledExecutorService eventLoop() {
      return eventLoop;
    }

    @Override
    public void close() {
      if (!closed.compareAndSet(false, true)) {
        return;
      }
      closing = true;
      channel.shutdownNow();
      try {
        channel.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        shutdown(group);
      }
    }

    /**
     * Counts inbound messages, requesting {@link #BATCH} at first and {@link #BATCH} more each time
     * {@link #BATCH} arrived.
     */
    private class BatchingConsumer implements ClientResponseObserver<byte[], byte[]> {
      private final LongAdder received;
      ClientCallStreamObserver<byte[]> call;
      private int sinceRequest;

      BatchingConsumer(LongAdder received) {
        this.received = received;
      }

      @Override
      public void beforeStart(ClientCallStreamObserver<byte[]> call) {
        this.call = call;
        call.disableAutoRequestWithInitial(BATCH);
      }

      @Override
      public void onNext(byte[] message) {
        received.increment();
        if (++sinceRequest == BATCH) {
          sinceRequest = 0;
          call.request(BATCH);
        }
      }

      @Override
      public void onError(Throwable t) {
        error(t);
      }

      @Override
      public void onCompleted() {}
    }

    /**
     * Sends the payload while the call is ready (fire-and-forget counts into {@code sent}); for
     * request-channel it also consumes the echoes in batches.
     *
     * <p>The on-ready handler does not send inline: it runs a burst once the event loop has
     * finished its current round of tasks, so that the loop reads its socket between bursts.
     * Sending inline starves reads on Netty 4.2.18: grpc-java completes write promises inside its
     * flush task, the on-ready callback they trigger queues a message, which schedules the next
     * flush task, and Netty 4.2 (before 4.2.19's {@code ioRatio}) runs tasks for up to 1 s per
     * round ({@code io.netty.eventLoop.maxTaskProcessingQuantumMs}) before doing I/O again; on
     * request-channel the echoes then sit unread for up to a second at a time.
     */
    private final class Sender extends BatchingConsumer implements Runnable {
      private final LongAdder sent;
      private final Runnable burst = this::burst;
      private boolean burstPending;

      Sender(LongAdder sent, LongAdder received) {
        super(received);
        this.sent = sent;
      }

      @Override
      public void beforeStart(ClientCallStreamObserver<byte[]> call) {
        if (sent == null) {
          super.beforeStart(call); // request-channel: consume the echoes in batches
        } else {
          this.call = call; // fire-and-forget: no response until the call ends
        }
        call.setOnReadyHandler(this);
      }

      @Override
      public void onNext(byte[] message) {
        if (sent == null) {
          super.onNext(message);
        }
      }

      /** On ready (on the event loop, direct executor): send after this round of tasks. */
      @Override
      public void run() {
        if (!burstPending) {
          burstPending = true;
          eventLoop.executeAfterEventLoopIteration(burst);
        }
      }

      private void burst() {
        burstPending = false;
        while (!closing && call.isReady()) {
          call.onNext(payload);
          if (sent != null) {
            sent.increment();
          }
        }
      }
    }
  }
}
