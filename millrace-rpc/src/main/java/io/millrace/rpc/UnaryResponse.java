package io.millrace.rpc;

import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.streams.internal.Scalar;
import java.lang.System.Logger.Level;
import java.util.function.Consumer;
import org.reactivestreams.Publisher;

/**
 * A unary method's response observer in the StreamObserver flavour, and the handler's answer: one
 * object where the general {@code ObserverCall} keeps a sending queue, credit, waiters and inbound
 * flow control that one response never needs.
 *
 * <p>When the handler runs. On the event loop of a call without a deadline, at once, when the
 * runtime asks for the answer ({@link #answer}): nothing can cancel the call before the loop is
 * free again, and an answer given before the handler returns (the common case: {@code onNext} then
 * {@code onCompleted}), with no on-cancel or on-ready handler set, is handed over as a {@link
 * Scalar}, which the runtime takes by a plain call ({@code AnsweredCall}). Anywhere else (a handler
 * executor, a deadline), when the runtime subscribes, as {@code ObserverCall} runs it: the
 * deadline's timer and the caller's cancel then reach a handler that is still running ({@code
 * isCancelled}, the on-cancel handler, {@code onNext} throwing CANCELLED).
 *
 * <p>What the handler sees is what {@code ObserverCall} gives a unary responder: the first {@code
 * onNext} is the response and ends the call (a second one is dropped, as the runtime drops it);
 * {@code onNext} after {@code onCompleted} or {@code onError} throws IllegalStateException; after a
 * cancel (by the caller, the deadline or the connection) {@code onNext} throws CANCELLED unless an
 * on-cancel handler was set, which then runs once on the event loop. What the handler throws fails
 * the call, unless it answered first. There are no requests to read, so {@code request(n)} and
 * {@code disableAutoInboundFlowControl} do nothing.
 *
 * <p>The outcome and its signalling are {@link OneAnswer}'s. The handler's calls must not overlap,
 * as for any StreamObserver.
 */
final class UnaryResponse<Resp> extends OneAnswer<Resp> implements ServerCallStreamObserver<Resp> {
  private static final System.Logger LOG = System.getLogger(UnaryResponse.class.getName());

  private final ServerContext context;
  private final Consumer<ServerCallStreamObserver<Resp>> handler; // run on subscribe; null: ran
  private volatile boolean ended; // onCompleted or onError was called
  private volatile Runnable onCancel;
  private volatile Runnable onReady;

  private UnaryResponse(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handlerOnSubscribe) {
    this.context = context;
    this.handler = handlerOnSubscribe;
  }

  /**
   * The answer of a unary method whose handler is {@code handler}: run now where {@link
   * #takesAtOnce} allows (a {@link Scalar} when it answered before returning and set no handlers),
   * else when the runtime subscribes.
   */
  static <Resp> Publisher<Resp> answer(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handler) {
    if (!takesAtOnce(context)) {
      return new UnaryResponse<>(context, handler);
    }
    UnaryResponse<Resp> r = new UnaryResponse<>(context, null);
    r.run(handler);
    if (r.onCancel == null && r.onReady == null) {
      Publisher<Resp> answer = r.settled();
      if (answer != r) {
        return answer;
      }
    }
    r.started();
    return r;
  }

  /** Runs the handler with this observer; what it throws fails the call unless it answered. */
  private void run(Consumer<ServerCallStreamObserver<Resp>> handler) {
    try {
      handler.accept(this);
    } catch (RuntimeException e) {
      onError(e); // ignored if it answered first
    }
  }

  /** The handler returned without an answer: an on-ready handler runs once, on the loop. */
  private void started() {
    Runnable ready = onReady;
    if (ready != null && isReady()) {
      ObserverCall.runOnLoop(
          context.loop(),
          () -> {
            if (isReady()) {
              try {
                ready.run();
              } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "on-ready handler threw", e);
                onError(e);
              }
            }
          });
    }
  }

  @Override
  protected void onSubscribed() {
    if (handler != null) {
      run(handler); // with the subscriber in place: a cancel now reaches the running handler
      started();
    }
  }

  @Override
  protected void onCancelled() {
    Runnable cancelHandler = onCancel;
    if (cancelHandler != null) {
      ObserverCall.runHandler(context.loop(), cancelHandler, "on-cancel handler");
    }
  }

  // ------------------------------------------------------------------ the handler's side

  @Override
  public void onNext(Resp response) {
    if (response == null) {
      throw new NullPointerException("value");
    }
    if (ended) {
      throw new IllegalStateException("onNext after onCompleted or onError");
    }
    if (cancelled()) {
      if (onCancel == null) {
        throw Status.CANCELLED.withMessage("the call was cancelled").asException();
      }
      return; // the on-cancel handler tells the application
    }
    answer(response); // a second response is dropped: a unary call ended with its first
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      throw new NullPointerException("throwable");
    }
    if (ended) {
      return;
    }
    ended = true;
    fail(t); // ignored after the answer (the response stands) or a cancel
  }

  @Override
  public void onCompleted() {
    if (ended) {
      return;
    }
    ended = true;
    answer(null); // without a response, the runtime fails the call with INTERNAL
  }

  @Override
  public boolean isReady() {
    return open() && !ended;
  }

  @Override
  public void setOnReadyHandler(Runnable onReadyHandler) {
    this.onReady = onReadyHandler;
  }

  @Override
  public void disableAutoInboundFlowControl() {}

  @Override
  public void request(int count) {
    if (count <= 0) {
      throw new IllegalArgumentException("count must be positive: " + count);
    }
  }

  @Override
  public boolean isCancelled() {
    return cancelled();
  }

  @Override
  public void setOnCancelHandler(Runnable onCancelHandler) {
    this.onCancel = onCancelHandler;
  }
}
