package io.millrace.rpc;

import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.Scalar;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A one-response call whose handler answered at once ({@link Scalar}: Reactor's {@code Mono.just},
 * {@code Mono.fromCallable}, {@code Mono.error}) and that has no deadline: the response, or the
 * failure, is made when the caller first asks, in one object with one compare-and-set. A {@link
 * ResponsePublisher} carries the other calls; for these it would keep a subscription relay, a
 * deadline lock and an end state machine that an answer already known never needs. The call is its
 * own Subscription and its own subscriber of the handler's outcome, and its one atomic operation
 * decides between the caller's request and a cancel.
 *
 * <p>What the caller sees is what a ResponsePublisher gives: the message with the handler's headers
 * and trailers (status OK), or a trailer with the failure's status (an ERROR for routing callers),
 * or INTERNAL when there is no message. A cancel before the request tells the handler's context, as
 * a cancelled call does.
 */
final class AnsweredCall<Resp> implements Publisher<Payload>, Subscription, Subscriber<Resp> {
  private static final int LIVE = 0;
  private static final int DONE = 1;

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

  // The handler's outcome as Scalar.signal gives it: reached from request() only, once.
  private static final int WAITING = 0;
  private static final int ANSWERED = 1; // the message went out; its completion follows
  private static final int ENDED = 2;
  private int phase = WAITING;

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

  /**
   * Whether a one-response call answered by {@code answer} can be carried by this class: an answer
   * given at once, no deadline, and a handler that ran on the connection's event loop. The answer
   * is taken when the caller asks, which is on the loop; a handler that runs on an executor (for
   * blocking work, such as a {@code Mono.fromCallable} that queries a database) keeps the
   * ResponsePublisher.
   */
  static boolean fits(ServerContext context, Publisher<?> answer) {
    return !context.hasDeadline() && Scalar.is(answer) && context.loop().inEventLoop();
  }

  @Override
  public void subscribe(Subscriber<? super Payload> subscriber) {
    if (subscriber == null) {
      throw new NullPointerException("subscriber"); // rule 1.9
    }
    if (downstream != null) {
      Publishers.refuseSecond(subscriber, "responses have");
      return;
    }
    downstream = subscriber;
    subscriber.onSubscribe(this);
  }

  @Override
  public void request(long n) {
    if (state != LIVE || !STATE.compareAndSet(this, LIVE, DONE)) {
      return; // answered, failed or cancelled already
    }
    try {
      if (n <= 0) {
        downstream.onError(
            new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
      } else {
        Scalar.signal(answer, this);
      }
    } finally {
      whenDone.run();
    }
  }

  @Override
  public void cancel() {
    int was = STATE.getAndSet(this, DONE);
    downstream = Publishers.CANCELLED; // rule 3.13: an answer being signalled is released there
    if (was == LIVE) {
      context.cancel(Status.CANCELLED);
      whenDone.run();
    }
  }

  // ------------------------------------------------------------------ the handler's outcome

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
      end(context.failure(t));
    }
  }

  @Override
  public void onComplete() {
    if (phase == ANSWERED) {
      phase = ENDED;
      downstream.onComplete();
    } else if (phase == WAITING) {
      end(NO_RESPONSE);
    }
  }

  /** Ends the call with {@code status}, as ResponsePublisher ends a call that has no response. */
  private void end(Status status) {
    phase = ENDED;
    if (routing) {
      if (status.isOk()) {
        downstream.onComplete();
      } else {
        downstream.onError(StreamErrorException.application(status.toString()));
      }
      return;
    }
    Payload trailer = trailerOrNull(context, alloc, status);
    if (trailer != null) {
      downstream.onNext(trailer);
    }
    downstream.onComplete();
  }

  /** What a native caller is sent for a call that ends with {@code status} and no response. */
  private static Payload trailerOrNull(
      ServerContext context, ByteBufAllocator alloc, Status status) {
    Headers trailers = context.trailersOrNull();
    return status.isOk() && trailers == null
        ? null
        : ResponsePublisher.trailer(context, alloc, status, trailers, true);
  }

  // ------------------------------------------------------------------ answered in place

  /**
   * Answers a call that {@link #fits} on its request-response {@code stream}, which is {@linkplain
   * Stream#isReady ready}, now: what an AnsweredCall sends once asked, sent without one, and
   * without a Payload for the response (the message is written straight into the frame, or
   * serialized first when it is too long for the frame batch). On the stream's event loop.
   */
  @SuppressWarnings("unchecked")
  static <Resp> void sendNow(
      Stream stream,
      ServerContext context,
      Marshaller<Resp> marshaller,
      boolean routing,
      ByteBufAllocator alloc,
      Publisher<Resp> answer) {
    Resp value;
    try {
      value = ((Callable<Resp>) answer).call();
    } catch (VirtualMachineError e) {
      endNow(stream, context, routing, alloc, context.failure(e)); // then thrown on
      throw e;
    } catch (Throwable t) {
      endNow(stream, context, routing, alloc, context.failure(t));
      return;
    }
    if (value == null) {
      endNow(stream, context, routing, alloc, NO_RESPONSE);
      return;
    }
    PayloadEncoder<Resp> encoder = marshaller.encoder();
    ByteBuf data = null;
    ByteBuf metadata;
    try {
      if (!ResponsePublisher.encodesInFrame(encoder, value)) {
        data = marshaller.serialize(value, alloc);
      }
      metadata = routing ? null : ResponsePublisher.responseMetadata(context, alloc, true, true);
    } catch (Throwable t) { // a message that would not serialize, or headers not written
      if (data != null) {
        data.release();
      }
      if (!(t instanceof RuntimeException e)) {
        throw t; // an Error: out of direct memory, say
      }
      endNow(stream, context, routing, alloc, Status.fromThrowable(e));
      return;
    }
    if (data == null) {
      stream.next(metadata, value, encoder); // a request-response's one payload completes it
    } else {
      stream.next(metadata, data);
    }
  }

  private static final Status NO_RESPONSE =
      Status.INTERNAL.withMessage("the handler completed without a response");

  /** {@link #end} on the stream itself. */
  private static void endNow(
      Stream stream,
      ServerContext context,
      boolean routing,
      ByteBufAllocator alloc,
      Status status) {
    if (routing) {
      if (status.isOk()) {
        stream.complete();
      } else {
        stream.fail(StreamErrorException.application(status.toString()));
      }
      return;
    }
    Payload trailer = trailerOrNull(context, alloc, status);
    if (trailer != null) {
      trailer.sendOn(stream);
    } else {
      stream.complete();
    }
  }
}
