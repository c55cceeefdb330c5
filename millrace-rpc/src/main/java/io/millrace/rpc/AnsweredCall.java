package io.millrace.rpc;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.Scalar;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A one-response call whose handler answered at once ({@link Scalar}: Reactor's {@code Mono.just},
 * {@code Mono.fromCallable}, {@code Mono.error}) and that has no deadline: the response, or the
 * failure, is made when the caller first asks, in one object with one compare-and-set. A {@link
 * ResponsePublisher} carries the other calls; for these it would keep a subscription relay, a
 * deadline lock and an end state machine that an answer already known never needs.
 *
 * <p>What the caller sees is what a ResponsePublisher gives: the message with the handler's headers
 * and trailers (status OK), or a trailer with the failure's status (an ERROR for routing callers),
 * or INTERNAL when there is no message. A cancel before the request tells the handler's context, as
 * a cancelled call does.
 */
final class AnsweredCall<Resp> implements Publisher<Payload>, Subscription {
  private static final int NEW = 0;
  private static final int SUBSCRIBED = 1;
  private static final int DONE = 2;

  private static final AtomicIntegerFieldUpdater<AnsweredCall<?>> STATE = newStateUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicIntegerFieldUpdater<AnsweredCall<?>> newStateUpdater() {
    return (AtomicIntegerFieldUpdater)
        AtomicIntegerFieldUpdater.newUpdater(AnsweredCall.class, "state");
  }

  private final ServerContext context;
  private final Marshaller<Resp> marshaller;
  private final boolean routing;
  private final ByteBufAllocator alloc;
  private final Publisher<Resp> answer;
  private final Runnable whenDone;

  private Subscriber<? super Payload> downstream;
  private volatile int state;

  /** {@code answer} is a {@link Scalar}; {@code whenDone} runs once the call has ended. */
  AnsweredCall(
      ServerContext context,
      Marshaller<Resp> marshaller,
      boolean routing,
      ByteBufAllocator alloc,
      Publisher<Resp> answer,
      Runnable whenDone) {
    this.context = context;
    this.marshaller = marshaller;
    this.routing = routing;
    this.alloc = alloc;
    this.answer = answer;
    this.whenDone = whenDone;
  }

  /** Whether a one-response call answered by {@code answer} can be carried by this class. */
  static boolean fits(ServerContext context, Publisher<?> answer) {
    return !context.hasDeadline() && Scalar.is(answer);
  }

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (!STATE.compareAndSet(this, NEW, SUBSCRIBED)) {
      Publishers.refuseSecond(subscriber, "responses have");
      return;
    }
    downstream = subscriber;
    subscriber.onSubscribe(this);
  }

  @Override
  public void request(long n) {
    if (state != SUBSCRIBED || !STATE.compareAndSet(this, SUBSCRIBED, DONE)) {
      return; // answered, failed or cancelled already
    }
    try {
      if (n <= 0) {
        downstream.onError(new IllegalArgumentException("request-n must be positive: " + n));
      } else {
        Scalar.signal(answer, new Responder());
      }
    } finally {
      whenDone.run();
    }
  }

  @Override
  public void cancel() {
    if (STATE.getAndSet(this, DONE) == SUBSCRIBED) {
      context.cancel(Status.CANCELLED);
      whenDone.run();
    }
  }

  /**
   * Turns the handler's outcome into the caller's: reached only from {@link #request}, once, so the
   * signals to the subscriber are serial. A class of its own so that the call's Subscription is not
   * also a Subscriber of the handler's answer.
   */
  private final class Responder implements Subscriber<Resp> {
    private static final int WAITING = 0;
    private static final int ANSWERED = 1; // the message went out; its completion follows
    private static final int ENDED = 2;

    private int phase = WAITING;

    @Override
    public void onSubscribe(Subscription s) {
      // Never called: Scalar.signal signals without a subscription.
    }

    @Override
    public void onNext(Resp value) {
      Payload p;
      try {
        p =
            ResponsePublisher.response(
                context, marshaller, marshaller.encoder(), routing, alloc, value, true, true);
      } catch (RuntimeException e) {
        end(Status.fromThrowable(e)); // a message that would not serialize
        return;
      }
      phase = ANSWERED;
      downstream.onNext(p);
    }

    @Override
    public void onError(Throwable t) {
      if (phase != ENDED) {
        end(Status.fromThrowable(t));
      }
    }

    @Override
    public void onComplete() {
      if (phase == ANSWERED) {
        phase = ENDED;
        downstream.onComplete();
      } else if (phase == WAITING) {
        end(Status.INTERNAL.withMessage("the handler completed without a response"));
      }
    }

    private void end(Status status) {
      phase = ENDED;
      if (routing) {
        downstream.onError(StreamErrorException.application(status.toString()));
        return;
      }
      downstream.onNext(
          ResponsePublisher.trailer(context, alloc, status, context.trailersOrNull(), true));
      downstream.onComplete();
    }
  }
}
