package io.millrace.streams;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.Signatures;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.internal.AnswerSink;
import io.millrace.streams.internal.AnswersInPlace;
import io.millrace.streams.internal.NoopSubscription;
import io.millrace.streams.internal.OutboundSink;
import io.millrace.streams.internal.Payloads;
import io.millrace.streams.internal.ReadsInPlace;
import io.millrace.streams.internal.ResponderChannel;
import io.millrace.streams.internal.ResponderSink;
import io.millrace.streams.internal.Scalar;
import io.millrace.streams.internal.StoppingSink;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.System.Logger.Level;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The engine's {@link Responder} for a {@link ReactiveHandler}: each request becomes a call of the
 * handler, and the Publisher it returns is subscribed and sent on the stream with end-to-end
 * backpressure (never more requested from it than the peer's credit allows, nothing while the
 * transport is not writable).
 *
 * <p>A request-response's answer that is known when the handler returns on the event loop (a
 * Publisher that is also a {@link java.util.concurrent.Callable}, as Reactor's {@code Mono.just},
 * {@code Mono.fromCallable}, {@code Mono.error} and {@code Mono.empty} are) is taken by calling it
 * and sent at once, without a subscription, when the stream can take it: what Reactor's own
 * operators do with such sources. It saves the answer's sink, its subscription and their atomic
 * updates on every call (docs/benchmarks.md, thirty-third session). The Reactor flavour's responder
 * hands such answers over only while no {@code onLastOperator} hook would wrap them at
 * subscription; a handler of this interface that returns Reactor's types itself gets the call
 * whatever hooks are installed.
 */
public final class ReactiveResponder implements Responder {
  static {
    Signatures.resolve(ReactiveResponder.class); // so that C2 may inline calls to their methods
  }

  private static final System.Logger LOG = System.getLogger(ReactiveResponder.class.getName());

  private final ReactiveHandler handler;
  private final StreamsOptions options;
  private final Executor executor;

  /** Whether requests are lent to the handler, which reads them in place on the loop. */
  private final boolean lends;

  /** The handler when it answers request-responses in place (and requests are lent), else null. */
  private final AnswersInPlace answersInPlace;

  private ReactiveResponder(ReactiveHandler handler, StreamsOptions options) {
    this.handler = handler;
    this.options = options;
    this.executor = options.handlerExecutor();
    this.lends = executor == null && handler instanceof ReadsInPlace;
    this.answersInPlace = lends && handler instanceof AnswersInPlace a ? a : null;
  }

  public static Responder of(ReactiveHandler handler) {
    return new ReactiveResponder(handler, StreamsOptions.DEFAULT);
  }

  public static Responder of(ReactiveHandler handler, StreamsOptions options) {
    return new ReactiveResponder(handler, options);
  }

  private Payload received(ByteBuf metadata, ByteBuf data) {
    return lends
        ? Payload.lent(metadata, data)
        : Payloads.received(metadata, data, options.zeroCopy());
  }

  @Override
  public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
    consume(connection, received(metadata, data), false);
  }

  @Override
  public void metadataPush(Connection connection, ByteBuf metadata) {
    consume(connection, received(metadata, Unpooled.EMPTY_BUFFER), true);
  }

  @Override
  public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    if (answersInPlace != null) {
      return answerInPlace(stream, metadata, data);
    }
    Payload p = received(metadata, data);
    if (executor != null) {
      AnswerSink sink = new AnswerSink(stream);
      answer(REQUEST_RESPONSE, p, sink, null);
      return sink;
    }
    Publisher<Payload> answer;
    try {
      answer = handlerAnswer(REQUEST_RESPONSE, p, null);
    } catch (Throwable t) {
      AnswerSink sink = new AnswerSink(stream);
      refuse(sink, t);
      return sink;
    }
    return send(stream, answer);
  }

  /**
   * Sends a request-response's answer, given on the loop: at once when its outcome can be had by a
   * call ({@link Scalar}: {@code Mono.just} and the like) and the stream can take it now, with no
   * subscription and no sink; else through an {@link AnswerSink} subscribed to it. Returns the
   * stream's listener.
   */
  private static StreamListener send(Stream stream, Publisher<Payload> answer) {
    if (!Scalar.is(answer) || !stream.isReady()) {
      AnswerSink sink = new AnswerSink(stream);
      subscribe(answer, sink);
      return sink;
    }
    Payload value;
    try {
      value = Scalar.call(answer);
    } catch (Throwable t) {
      // As the subscription path ends, an Error included (Reactor's scalar Monos signal an
      // Exception, and an Error thrown from their request reaches subscribe()'s catch): the call
      // fails, the connection stays.
      if (LOG.isLoggable(Level.DEBUG)) {
        LOG.log(Level.DEBUG, "stream " + stream.streamId() + " fails: " + t, t);
      }
      stream.fail(t);
      return ANSWERED;
    }
    if (value == null) {
      stream.complete(); // an empty answer
    } else {
      Payloads.sendOrFail(value, stream); // the answer completes the call in the same frame
    }
    return ANSWERED;
  }

  /** A request-response for an {@link AnswersInPlace} handler, on the loop. */
  private StreamListener answerInPlace(Stream stream, ByteBuf metadata, ByteBuf data) {
    Publisher<Payload> answer;
    try {
      answer = answersInPlace.requestResponse(stream, metadata, data);
    } catch (Throwable t) {
      AnswerSink sink = new AnswerSink(stream);
      refuse(sink, t);
      return sink;
    }
    if (answer == null) {
      if (!stream.isOutboundDone()) { // a handler that broke its contract: the stream must end
        stream.fail(new IllegalStateException("the handler neither answered nor gave an answer"));
      }
      return ANSWERED;
    }
    return send(stream, answer);
  }

  /**
   * The listener of a request-response answered in place, or whose answer went out at once: nothing
   * more will happen on it.
   */
  private static final StreamListener ANSWERED = new StreamListener() {};

  @Override
  public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    Payload p = received(metadata, data);
    OutboundSink sink =
        new OutboundSink(stream.connection().executor(), stream, options.prefetch());
    answer(REQUEST_STREAM, p, sink, null);
    return sink;
  }

  @Override
  public StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    Payload p = received(metadata, data);
    ResponderChannel channel = new ResponderChannel(stream, options, inboundComplete);
    answer(REQUEST_CHANNEL, p, channel.sink(), channel);
    return channel;
  }

  private static final int REQUEST_RESPONSE = 0;
  private static final int REQUEST_STREAM = 1;
  private static final int REQUEST_CHANNEL = 2;

  /**
   * Calls the handler and subscribes the sink to its answer: here, or on the handler executor. (No
   * lambda on the loop's path: a call allocates only what it must.)
   */
  private void answer(int kind, Payload request, StoppingSink sink, ResponderChannel channel) {
    if (executor == null) {
      subscribeAnswer(kind, request, sink, channel, null);
      return;
    }
    long arrived = System.nanoTime();
    try {
      executor.execute(
          () -> {
            if (sink.isStopped()) { // cancelled (or the connection lost) while it waited its turn
              request.release();
              if (channel != null) {
                Payloads.cancelUnread(channel.inbound());
              }
              return;
            }
            subscribeAnswer(
                kind, request, sink, channel, handling(arrived, sink.onItsLoop() ? null : sink));
          });
    } catch (RejectedExecutionException e) {
      executorRefused(e);
      request.release();
      refuse(sink, new StreamErrorException(ErrorCode.REJECTED, "the server is overloaded"));
    }
  }

  /**
   * What the handler executor's thread is handling: set while a handler method runs there, so that
   * the method can ask when its request arrived ({@link #requestArrivedNanos}) and be told of the
   * peer's cancel ({@link #onCancelWhileHandling}). Elsewhere the handler runs as the request
   * arrives, on the loop, where nothing reaches the call while it runs. (A mutable object per
   * thread, not a Runnable around the handling: a call on the handler executor allocates only its
   * task.)
   */
  private static final class Handling {
    long arrived;
    boolean active;

    /** The call's sink: null for a fire-and-forget (nothing can cancel it). */
    StoppingSink sink;

    void end() {
      active = false;
      sink = null;
    }
  }

  private static final ThreadLocal<Handling> HANDLING = ThreadLocal.withInitial(Handling::new);

  /**
   * The {@code System.nanoTime()} at which the request being handled arrived: in a handler method
   * run on the handler executor ({@link StreamsOptions#handlerExecutor()}), when the event loop
   * read it, so that the time it waited for a thread counts against its deadline; anywhere else,
   * now (a handler on the event loop runs as its request arrives).
   */
  public static long requestArrivedNanos() {
    Handling h = HANDLING.get();
    return h.active ? h.arrived : System.nanoTime();
  }

  /**
   * In a handler method run on the handler executor for a request-response, a stream or a channel:
   * runs {@code hook} once if the call ends from the peer's side (its CANCEL or ERROR, or the
   * connection lost) before the method has returned and its answer is subscribed, on the event loop
   * that learns it (here, at once, if it has already). So a method that blocks (a database query,
   * say) can stop its work when the caller has gone, as a gRPC service learns from its Context.
   * Returns false, and keeps nothing, anywhere else: on the event loop nothing reaches the call
   * while the method runs, and once the answer is subscribed a cancel reaches it by its {@code
   * Subscription}. One hook per call; take it off with {@link #removeCancelWhileHandling} when the
   * work it guards is done (it is taken off anyway when the method returns). Keep it short and
   * non-blocking. Under the RPC layer the call's one hook is its {@code ServerContext}'s: use the
   * context's {@code onCancel} there.
   */
  public static boolean onCancelWhileHandling(Runnable hook) {
    java.util.Objects.requireNonNull(hook, "hook");
    StoppingSink sink = handledSink();
    if (sink == null) {
      return false;
    }
    sink.onStop(hook);
    return true;
  }

  /**
   * Whether {@link #onCancelWhileHandling} would take a hook here: this thread runs a handler
   * method for a request-response, a stream or a channel on the handler executor.
   */
  public static boolean cancelCanComeWhileHandling() {
    return handledSink() != null;
  }

  private static StoppingSink handledSink() {
    Handling h = HANDLING.get();
    return h.active ? h.sink : null;
  }

  /** Takes off a hook that {@link #onCancelWhileHandling} set on the call being handled, if any. */
  public static void removeCancelWhileHandling(Runnable hook) {
    StoppingSink sink = handledSink();
    if (sink != null) {
      sink.removeOnStop(hook);
    }
  }

  /**
   * Marks this thread as handling a request that arrived at {@code arrived} (for {@code sink}: null
   * for a fire-and-forget, or for a method an executor runs on the event loop itself, where no
   * cancel comes while it runs); the caller {@linkplain Handling#end ends} the mark when the
   * handling returns.
   */
  private static Handling handling(long arrived, StoppingSink sink) {
    Handling h = HANDLING.get();
    h.arrived = arrived;
    h.sink = sink;
    h.active = true;
    return h;
  }

  /**
   * Calls the handler and subscribes the sink to its answer; {@code handling}: the mark of a method
   * run on the handler executor (null on the loop), ended as the method returns, with the cancel
   * hook it may have set taken off (its cancel comes by the subscription from then on).
   */
  private void subscribeAnswer(
      int kind, Payload request, StoppingSink sink, ResponderChannel channel, Handling handling) {
    Publisher<Payload> answer;
    try {
      answer = handlerAnswer(kind, request, channel);
    } catch (Throwable t) {
      refuse(sink, t);
      return;
    } finally {
      if (handling != null) {
        handling.end();
        sink.clearOnStop();
      }
    }
    subscribe(answer, sink);
  }

  /** The handler's Publisher for a request of {@code kind}; a null one throws. */
  private Publisher<Payload> handlerAnswer(int kind, Payload request, ResponderChannel channel) {
    Publisher<Payload> answer =
        switch (kind) {
          case REQUEST_RESPONSE -> handler.requestResponse(request);
          case REQUEST_STREAM -> handler.requestStream(request);
          default -> handler.requestChannel(request, channel.inbound());
        };
    if (answer == null) {
      throw new NullPointerException("the handler returned no Publisher");
    }
    return answer;
  }

  /** Ends {@code sink}'s stream with {@code t}: there is no answer to subscribe it to. */
  private static void refuse(ResponderSink sink, Throwable t) {
    sink.onSubscribe(NoopSubscription.INSTANCE);
    sink.onError(t);
  }

  private static void subscribe(Publisher<Payload> answer, ResponderSink sink) {
    try {
      answer.subscribe(sink);
    } catch (Throwable t) {
      sink.onError(t); // a Publisher that throws instead of signalling (rule 1.9)
    }
  }

  /**
   * The most fire-and-forget and metadata-push calls of one connection whose handling has not
   * ended: waiting for the handler executor, or a handler's Publisher not yet complete. They have
   * no credit and no stream, so nothing else holds a peer back: past this many, new ones are
   * dropped (released, and logged), as a peer that sends faster than the handlers finish would
   * otherwise grow the heap without bound. The count is per connection and goes with it.
   */
  public static final int MAX_FIRE_AND_FORGETS_RUNNING = 4096;

  /** Per connection, its fire-and-forgets being handled; only those that outlive their call. */
  private final ConcurrentHashMap<Connection, AtomicInteger> fireAndForgetsRunning =
      new ConcurrentHashMap<>();

  private final AtomicLong fireAndForgetsDropped = new AtomicLong();

  private final AtomicLong executorRefusals = new AtomicLong();

  /**
   * Logs a request the handler executor refused: the first, then at each power of two with the
   * count, so that a peer that keeps an overloaded server refusing cannot flood the log from the
   * event loop.
   */
  private void executorRefused(RejectedExecutionException e) {
    long n = executorRefusals.incrementAndGet();
    if (Long.bitCount(n) == 1) {
      LOG.log(
          Level.WARNING, "the handler executor refused a request (" + n + " refused so far): " + e);
    }
  }

  /** Fire-and-forget and metadata push: here, or on the handler executor. */
  private void consume(Connection connection, Payload p, boolean metadataPush) {
    AtomicInteger running =
        fireAndForgetsRunning.isEmpty() ? null : fireAndForgetsRunning.get(connection);
    if (running != null && running.get() >= MAX_FIRE_AND_FORGETS_RUNNING) {
      p.release();
      long dropped = fireAndForgetsDropped.incrementAndGet();
      if (Long.bitCount(dropped) == 1) { // the 1st, 2nd, 4th, 8th...: a bounded log
        LOG.log(
            Level.WARNING,
            (metadataPush ? "metadata push" : "fire-and-forget")
                + " dropped: "
                + MAX_FIRE_AND_FORGETS_RUNNING
                + " from "
                + connection.remoteAddress()
                + " are being handled ("
                + dropped
                + " dropped so far)");
      }
      return;
    }
    if (executor == null) {
      handle(connection, p, metadataPush, null); // counted only if its handling outlives this
      return;
    }
    AtomicInteger counted = running != null ? running : runningOn(connection);
    counted.incrementAndGet();
    long arrived = System.nanoTime();
    try {
      executor.execute(
          () -> {
            Handling h = handling(arrived, null);
            try {
              handle(connection, p, metadataPush, counted);
            } finally {
              h.end();
            }
          });
    } catch (RejectedExecutionException e) {
      executorRefused(e);
      p.release();
      counted.decrementAndGet();
    }
  }

  /** The count of {@code connection}'s fire-and-forgets being handled, made on first use. */
  private AtomicInteger runningOn(Connection connection) {
    AtomicInteger n = fireAndForgetsRunning.get(connection);
    if (n == null) {
      AtomicInteger fresh = new AtomicInteger();
      n = fireAndForgetsRunning.putIfAbsent(connection, fresh);
      if (n == null) {
        n = fresh;
        // (outside the map's own update: a closed connection completes this at once)
        connection
            .onClose()
            .whenComplete((reason, error) -> fireAndForgetsRunning.remove(connection, fresh));
      }
    }
    return n;
  }

  /**
   * Runs a fire-and-forget's handler and subscribes to its end, which is only logged. {@code
   * counted}: the count it was already added to (handed to the executor), or null: then it is added
   * to its connection's count only if its Publisher has not ended once subscribed.
   */
  private void handle(
      Connection connection, Payload p, boolean metadataPush, AtomicInteger counted) {
    Publisher<Void> done;
    try {
      done = metadataPush ? handler.metadataPush(p) : handler.fireAndForget(p);
    } catch (Throwable e) { // an Error too (a class that failed to load): the connection goes on
      done = null;
      LOG.log(
          Level.WARNING,
          (metadataPush ? "metadata push" : "fire-and-forget") + " handler failed",
          e);
    }
    if (done == null) { // nothing to wait for (nor to allocate)
      if (counted != null) {
        counted.decrementAndGet();
      }
      return;
    }
    Ending ending = new Ending(metadataPush, counted);
    try {
      done.subscribe(ending);
    } catch (Throwable e) { // what a library rethrows from subscribe as fatal (LinkageError)
      ending.onError(e);
      return;
    }
    if (counted == null && ending.get() == Ending.RUNNING) { // it outlives its call: count it
      ending.countIfRunning(runningOn(connection));
    }
  }

  /**
   * A fire-and-forget's end: logged when it fails; taken off its connection's count once, if it was
   * counted. Its value: {@link #RUNNING}, {@link #COUNTED} or {@link #ENDED}.
   */
  private static final class Ending extends AtomicInteger implements Subscriber<Void> {
    private static final long serialVersionUID = 1L;
    private static final int RUNNING = 0;
    private static final int COUNTED = 1;
    private static final int ENDED = 2;

    private final boolean metadataPush;
    private volatile AtomicInteger count;
    private boolean subscribed; // signals are serial (rule 1.3)

    Ending(boolean metadataPush, AtomicInteger counted) {
      super(counted == null ? RUNNING : COUNTED);
      this.metadataPush = metadataPush;
      this.count = counted;
    }

    /** Its handling outlives the call that started it: it counts until it ends. */
    void countIfRunning(AtomicInteger running) {
      count = running;
      if (compareAndSet(RUNNING, COUNTED)) {
        running.incrementAndGet(); // (an end in between takes it off first: briefly one less)
      }
    }

    @Override
    public void onSubscribe(Subscription s) {
      if (s == null) {
        throw new NullPointerException("subscription"); // rule 2.13
      }
      if (subscribed) {
        s.cancel(); // rule 2.5
        return;
      }
      subscribed = true;
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(Void v) {
      throw new NullPointerException("a Publisher<Void> has no item to signal"); // rule 2.13
    }

    @Override
    public void onError(Throwable t) {
      if (t == null) {
        throw new NullPointerException("throwable"); // rule 2.13
      }
      if (end()) {
        LOG.log(
            Level.WARNING,
            (metadataPush ? "metadata push" : "fire-and-forget") + " handler failed",
            t);
      }
    }

    @Override
    public void onComplete() {
      end();
    }

    private boolean end() {
      int was = getAndSet(ENDED);
      if (was == COUNTED) {
        count.decrementAndGet();
      }
      return was != ENDED;
    }
  }
}
