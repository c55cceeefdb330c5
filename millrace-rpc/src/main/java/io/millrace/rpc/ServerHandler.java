package io.millrace.rpc;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.core.internal.Signatures;
import io.millrace.core.internal.UnreadBudget;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.millrace.streams.internal.AnswersInPlace;
import io.millrace.streams.internal.Payloads;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;

/** One connection's RPC calls: finds each call's method and runs its handler. */
final class ServerHandler implements ReactiveHandler, AnswersInPlace {
  static {
    Signatures.resolve(
        ServerHandler.class, Watch.class); // so that C2 may inline calls to their methods
  }

  private static final System.Logger LOG = System.getLogger(ServerHandler.class.getName());

  /** How the connection's callers name methods. */
  enum Mode {
    /** The call header ({@link CallHeader}). */
    NATIVE,
    /** Composite metadata with a routing entry. */
    COMPOSITE,
    /** Routing metadata alone. */
    ROUTING
  }

  /** The interaction a call came as. */
  private enum Interaction {
    REQUEST_RESPONSE,
    REQUEST_STREAM,
    REQUEST_CHANNEL,
    FIRE_AND_FORGET
  }

  private final RpcServer server;
  private final Mode mode;
  private final Connection connection;

  /**
   * What calls have from the connection; replaced when the peer's address changes (a resumed
   * connection), so that a call keeps the address it came from. A plain field: a thread that reads
   * an older one makes its own (records publish safely).
   */
  private ServerContext.Origin origin;

  private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;

  ServerHandler(RpcServer server, Mode mode, Connection connection) {
    this.server = server;
    this.mode = mode;
    this.connection = connection;
    this.origin =
        new ServerContext.Origin(
            connection.executor(),
            server.options().prefetch(),
            connection::tlsSession,
            io.millrace.observer.internal.StreamHandlers.forConnection(),
            connection.remoteAddress(),
            UnreadBudget.of(connection));
  }

  /** The connection's origin, with the caller's address as it is now. */
  private ServerContext.Origin origin() {
    ServerContext.Origin o = origin;
    ServerContext.Origin now = o.at(connection.remoteAddress());
    if (now != o) {
      origin = now;
    }
    return now;
  }

  @Override
  public Publisher<Payload> requestResponse(Payload payload) {
    return single(payload, Interaction.REQUEST_RESPONSE);
  }

  /**
   * A request-response read and, when its answer is known at once and the stream can take it,
   * answered in place: parsed from the engine's buffer and sent on the stream, with none of the
   * objects a Publisher answer costs ({@link AnsweredCall#sendNow}).
   */
  @Override
  public Publisher<Payload> requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    return single(stream, metadata, data, Interaction.REQUEST_RESPONSE);
  }

  @Override
  public Publisher<Payload> requestStream(Payload payload) {
    return single(payload, Interaction.REQUEST_STREAM);
  }

  @Override
  public Publisher<Void> fireAndForget(Payload payload) {
    Publisher<Payload> answer = single(payload, Interaction.FIRE_AND_FORGET);
    // Its end, so that the responder counts the call until its handler is done (a blocking
    // handler's call waits for the service's executor): fire-and-forget is bounded there.
    return done -> answer.subscribe(new Discarding(done));
  }

  @Override
  public Publisher<Payload> requestChannel(Payload first, Publisher<Payload> inbound) {
    ServerContext context;
    try {
      context = resolve(first.metadata(), Interaction.REQUEST_CHANNEL);
    } catch (StatusException e) {
      first.release();
      Payloads.cancelUnread(inbound);
      return failed(null, e.status(), NOTHING);
    }
    return channel(context, context.served(), first, inbound);
  }

  private <Req, Resp> Publisher<Payload> channel(
      ServerContext context,
      ServerMethod<Req, Resp> method,
      Payload first,
      Publisher<Payload> inbound) {
    if (context.expired()) {
      first.release();
      Payloads.cancelUnread(inbound);
      return failed(context, PASSED_BEFORE_THE_HANDLER, NOTHING);
    }
    Marshaller<Req> marshaller = method.descriptor().requestMarshaller();
    Req firstMessage = null;
    try {
      if (!context.noMessage()) {
        firstMessage = marshaller.parse(first.data());
      }
    } catch (StatusException e) {
      Payloads.cancelUnread(inbound);
      return failed(context, e.status(), NOTHING);
    } finally {
      first.release();
    }
    Req firstRequest = firstMessage;
    PrefixedPublisher<Payload, Req> requests =
        PrefixedPublisher.parsing(
            firstRequest == null ? null : () -> firstRequest, inbound, marshaller::parse);
    Watch watch = watch(context);
    Publisher<Resp> responses;
    try {
      responses = server.intercepted(context, () -> method.streaming().handle(requests, context));
    } catch (Throwable t) {
      dropDeadline(watch);
      throw t;
    } finally {
      unwatch(watch);
    }
    return respond(
        context,
        method,
        responses,
        method.descriptor().type() == MethodDescriptor.Type.CLIENT_STREAMING,
        requests::close, // the answer ended: the caller's stream is not read any more
        watch);
  }

  /**
   * While the interceptors and the handler's method run on a handler executor, the call is watched
   * from the loop: the caller's CANCEL (or the connection lost) and the deadline, when it passes,
   * cancel the call's context ({@code isCancelled}, the {@code onCancel} hooks) at once, as gRPC
   * cancels its Context, not when the method returns (a Reactor handler that queries a database
   * before it returns {@code Mono.just}, or a blocking one on virtual threads, would otherwise
   * learn only afterwards). The call itself then ends as the method returns (for the deadline, by
   * the same timer, handed to the answer: {@link Watch#handTo}). Null on the loop, where nothing
   * else runs while the method does, and when there is nothing to watch. One object per call run on
   * a handler executor.
   */
  private Watch watch(ServerContext context) {
    EventExecutor loop = connection.executor();
    boolean cancellable = ReactiveResponder.cancelCanComeWhileHandling();
    if (loop.inEventLoop() || !cancellable && !context.hasDeadline()) {
      return null; // (a fire-and-forget without a deadline: nothing to watch)
    }
    Watch watch = new Watch(context);
    watch.hooked = cancellable && ReactiveResponder.onCancelWhileHandling(watch);
    if (context.hasDeadline()) {
      long left = Math.max(0, context.deadlineNanos() - System.nanoTime());
      try {
        watch.deadline = loop.schedule(watch::deadlinePassed, left, TimeUnit.NANOSECONDS);
      } catch (RejectedExecutionException loopGone) {
        // the connection is gone, and the call with it
      }
    }
    return watch;
  }

  /**
   * The method returned: the cancel's hook comes off (the deadline's timer stays, for the answer).
   */
  private static void unwatch(Watch watch) {
    if (watch != null && watch.hooked) {
      ReactiveResponder.removeCancelWhileHandling(watch);
    }
  }

  /** The call ends without an answer that takes over the watch's timer: it is cancelled. */
  private static void dropDeadline(Watch watch) {
    if (watch != null && watch.deadline != null) {
      watch.deadline.cancel(false);
    }
  }

  /**
   * A call watched while its method runs on a handler executor: itself the cancel's hook, and the
   * owner of the deadline's timer until the call's answer takes it over ({@link #handTo}).
   */
  private static final class Watch implements Runnable {
    private final ServerContext context;
    ScheduledFuture<?> deadline;
    boolean hooked;

    /** The answer that took the timer over; its expiry is the timer's from then on. */
    private volatile ResponsePublisher<?> answer;

    /** Whether the timer went off (before or after the hand-over). */
    private volatile boolean passed;

    Watch(ServerContext context) {
      this.context = context;
    }

    /** The caller cancelled, or the connection went: on the loop. */
    @Override
    public void run() {
      context.cancel(Status.CANCELLED);
    }

    /**
     * The timer went off, on the loop: before the hand-over, only the context hears it (the call
     * ends as the answer is made); after, the answer expires. Written before it is read, on both
     * sides ({@link #handTo}), so one of them at least sees the other (both may: expiry is once).
     */
    void deadlinePassed() {
      passed = true;
      ResponsePublisher<?> a = answer;
      if (a != null) {
        a.expire();
      } else {
        context.cancel(Status.DEADLINE_EXCEEDED);
      }
    }

    /** {@code a} takes the timer over: it cancels it when the call ends, or expires by it. */
    void handTo(ResponsePublisher<?> a) {
      a.adoptDeadline(deadline);
      answer = a;
      if (passed || context.expired()) {
        a.expire(); // it went off before the hand-over was seen, or is due and has not run yet
      }
    }
  }

  private Publisher<Payload> single(Payload payload, Interaction interaction) {
    try {
      return single(null, payload.metadata(), payload.data(), interaction);
    } finally {
      payload.release();
    }
  }

  /**
   * A call with one request, read from {@code metadata} and {@code data}, which stay the caller's.
   * Given the request-response's {@code stream}, an answer known at once is sent on it here (null
   * returned); otherwise the answer's Publisher is returned.
   */
  private Publisher<Payload> single(
      Stream stream, ByteBuf metadata, ByteBuf data, Interaction interaction) {
    ServerContext context;
    try {
      context = resolve(metadata, interaction);
    } catch (StatusException e) {
      return failed(null, e.status(), NOTHING);
    }
    return single(
        stream, context, context.served(), data, interaction == Interaction.FIRE_AND_FORGET);
  }

  private <Req, Resp> Publisher<Payload> single(
      Stream stream,
      ServerContext context,
      ServerMethod<Req, Resp> method,
      ByteBuf data,
      boolean fireAndForget) {
    if (context.expired()) { // it waited for a handler thread past its deadline: not run at all
      return failed(context, PASSED_BEFORE_THE_HANDLER, NOTHING);
    }
    Req request;
    try {
      request = method.descriptor().requestMarshaller().parse(data);
    } catch (StatusException e) {
      return failed(context, e.status(), NOTHING);
    }
    boolean oneResponse =
        !fireAndForget && method.descriptor().type() == MethodDescriptor.Type.UNARY;
    Watch watch = watch(context);
    Publisher<Resp> responses;
    try {
      responses =
          server.intercepted(
              context,
              oneResponse
                  ? () -> method.answer(request, context)
                  : () -> method.single().handle(request, context));
    } catch (Throwable t) {
      dropDeadline(watch);
      throw t;
    } finally {
      unwatch(watch);
    }
    if (stream != null && AnsweredCall.fits(context, responses) && stream.isReady()) {
      AnsweredCall.sendNow(
          stream,
          context,
          method.descriptor().responseMarshaller(),
          mode != Mode.NATIVE,
          alloc,
          responses);
      return null;
    }
    return respond(context, method, responses, oneResponse, NOTHING, watch);
  }

  /**
   * The call's answer to {@code responses}, the intercepted handler's. The deadline's timer of
   * {@code watch} (the method ran on a handler executor), if any, becomes the answer's own: one
   * timer per call, armed from the executor once, not a second armed as the first is cancelled.
   */
  private <Resp> Publisher<Payload> respond(
      ServerContext context,
      ServerMethod<?, Resp> method,
      Publisher<Resp> responses,
      boolean oneResponse,
      Runnable whenDone,
      Watch watch) {
    if (oneResponse && AnsweredCall.fits(context, responses)) { // (no deadline: no timer)
      return new AnsweredCall<>(
          context,
          method.descriptor().responseMarshaller(),
          mode != Mode.NATIVE,
          alloc,
          responses,
          whenDone);
    }
    ResponsePublisher<Resp> answer;
    try {
      answer =
          new ResponsePublisher<>(
              context,
              method.descriptor().responseMarshaller(),
              oneResponse,
              mode != Mode.NATIVE,
              alloc,
              responses,
              whenDone);
    } catch (Throwable e) { // (a marshaller that broke its word and threw)
      dropDeadline(watch);
      throw e;
    }
    if (watch != null && watch.deadline != null) {
      watch.handTo(answer);
    } else if (context.hasDeadline()) {
      answer.startDeadline(connection.executor());
    }
    return answer;
  }

  private Publisher<Payload> failed(ServerContext context, Status status, Runnable whenDone) {
    ServerContext c =
        context != null
            ? context
            : new ServerContext(null, Headers.EMPTY, CallHeader.NO_TIMEOUT, false, origin());
    return ResponsePublisher.failed(c, mode != Mode.NATIVE, alloc, status, whenDone);
  }

  private static final Runnable NOTHING = () -> {};

  private static final Status PASSED_BEFORE_THE_HANDLER =
      Status.DEADLINE_EXCEEDED.withMessage("the deadline passed before the handler ran");

  /**
   * Finds the method and checks that it was called the way it is served; returns the call's
   * context, which carries the method.
   */
  private ServerContext resolve(ByteBuf metadata, Interaction interaction) {
    ServerMethod<?, ?> method;
    Headers headers = Headers.EMPTY;
    long timeout = CallHeader.NO_TIMEOUT;
    boolean noMessage = false;
    String name;
    long id = 0;
    if (mode == Mode.NATIVE && CallHeader.isPlain(metadata)) {
      id = CallHeader.plainMethodId(metadata); // the common case: no header object per call
      method = server.method(id);
      name = null;
    } else if (mode == Mode.NATIVE) {
      CallHeader header = CallHeader.decode(metadata, server.maxHeaderBytes());
      id = header.methodId();
      method = server.method(id);
      name = header.methodName(); // null: the id, spelled out below only for an error
      if (method != null
          && header.methodName() != null
          && !method.descriptor().fullName().equals(header.methodName())) {
        method = null; // a name whose id another method has
      }
      headers = header.headers();
      timeout = header.timeoutMicros();
      noMessage = header.noMessage();
    } else {
      String route =
          mode == Mode.COMPOSITE
              ? Routing.firstRouteInComposite(metadata)
              : Routing.firstRoute(metadata);
      if (route == null) {
        throw Status.UNIMPLEMENTED.withMessage("the call has no route").asException();
      }
      method = server.method(route);
      name = route;
    }
    if (method == null) {
      throw Status.UNIMPLEMENTED
          .withMessage(
              "unknown method "
                  + (name != null ? Headers.shortened(name) : "id " + Long.toHexString(id)))
          .asException();
    }
    MethodDescriptor<?, ?> d = method.descriptor();
    boolean fits =
        switch (interaction) {
          case REQUEST_RESPONSE -> d.type() == MethodDescriptor.Type.UNARY && method.answers();
          case FIRE_AND_FORGET -> d.type() == MethodDescriptor.Type.UNARY;
          case REQUEST_STREAM -> d.type() == MethodDescriptor.Type.SERVER_STREAMING;
          case REQUEST_CHANNEL -> d.type().clientSendsStream();
        };
    if (!fits) {
      throw Status.UNIMPLEMENTED
          .withMessage(d.fullName() + " is " + d.type() + ", called as " + interaction)
          .asException();
    }
    return new ServerContext(method, headers, timeout, noMessage, origin());
  }

  /**
   * A fire-and-forget call's answer: run for its effect, the outcome only logged; its end (a
   * failure too) is the completion of {@code done}.
   */
  private static final class Discarding implements org.reactivestreams.Subscriber<Payload> {
    private final org.reactivestreams.Subscriber<? super Void> done;

    Discarding(org.reactivestreams.Subscriber<? super Void> done) {
      this.done = done;
    }

    @Override
    public void onSubscribe(org.reactivestreams.Subscription s) {
      done.onSubscribe(s); // which asks for everything, and may cancel
    }

    @Override
    public void onNext(Payload p) {
      p.release();
    }

    @Override
    public void onError(Throwable t) {
      LOG.log(System.Logger.Level.DEBUG, "a fire-and-forget call failed", t);
      done.onComplete();
    }

    @Override
    public void onComplete() {
      done.onComplete();
    }
  }
}
