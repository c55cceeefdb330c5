package io.millrace.rpc;

import io.millrace.core.NoRoomException;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.ReadsInPlace;
import io.netty.buffer.ByteBuf;
import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The caller's side of one call: subscribes to the call's payloads (a new call per subscription)
 * and emits the parsed responses, reading response headers and the trailer on the way; a failure
 * becomes a {@link StatusException}. With a timeout, a timer on the connection's loop cancels the
 * call and fails it with DEADLINE_EXCEEDED.
 *
 * <p>Demand: the trailer that ends a call is one more payload from the connection, but the caller
 * never asked for it, so this reader asks the call for one unit more than its subscriber (once, at
 * the first request). A message that arrives on that unit waits in a one-place buffer until the
 * subscriber asks; the call's end then waits behind it, unless it is a failure and the subscriber
 * asks for nothing more (the failure goes out at once: a call never hangs on demand).
 *
 * <p>Signals to the subscriber go out from one thread at a time (an emitter loop: the thread that
 * finds it busy leaves its work to the one inside); the lock guards the state only and is never
 * held while the subscriber runs.
 */
final class ResponseReader<Resp>
    implements Publisher<Resp>, Subscriber<Payload>, Subscription, ReadsInPlace {
  private final Supplier<Publisher<Payload>> call;
  private final Marshaller<Resp> marshaller;
  private final CallOptions options;
  private final boolean oneResponse;
  private final boolean routing;
  private final int maxHeaderBytes;
  private final ScheduledExecutorService timers;
  private final Runnable whenDone;

  private Subscriber<? super Resp> downstream;
  private volatile Subscription upstream;
  private ScheduledFuture<?> deadlineTimer;

  // Guarded by this.
  private ArrayDeque<Resp> ready; // made when a response has to wait
  private long requested;
  private boolean askedOnce;
  private Throwable failure; // the end, when it is a failure
  private boolean completed; // the end, when it is a completion
  private boolean terminated; // the end was signalled, or the subscriber cancelled
  private boolean emitting;
  private boolean missed;

  // Touched by the thread delivering payloads only.
  private boolean sawHeaders;
  private int responses;

  ResponseReader(
      Supplier<Publisher<Payload>> call,
      Marshaller<Resp> marshaller,
      CallOptions options,
      boolean oneResponse,
      boolean routing,
      int maxHeaderBytes,
      ScheduledExecutorService timers,
      Runnable whenDone) {
    this.call = call;
    this.marshaller = marshaller;
    this.options = options;
    this.oneResponse = oneResponse;
    this.routing = routing;
    this.maxHeaderBytes = maxHeaderBytes;
    this.timers = timers;
    this.whenDone = whenDone;
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (downstream != null) {
      // Each subscription is its own call: a fresh reader carries it.
      new ResponseReader<>(
              call, marshaller, options, oneResponse, routing, maxHeaderBytes, timers, whenDone)
          .subscribe(subscriber);
      return;
    }
    downstream = subscriber;
    if (options.timeout() != null && options.timeout().isZero()) {
      failEarly(
          subscriber,
          Status.DEADLINE_EXCEEDED
              .withMessage("the deadline passed before the call")
              .asException());
      return;
    }
    Publisher<Payload> payloads;
    try {
      payloads = call.get();
    } catch (RuntimeException e) {
      failEarly(subscriber, statusOf(e).asException());
      return;
    }
    payloads.subscribe(this);
  }

  private void failEarly(Subscriber<? super Resp> subscriber, StatusException e) {
    synchronized (this) {
      terminated = true;
    }
    subscriber.onSubscribe(this);
    subscriber.onError(e);
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream = s;
    downstream.onSubscribe(this);
    if (options.timeout() != null) { // after onSubscribe returned: no signal overlaps it
      ScheduledFuture<?> t =
          timers.schedule(this::expire, options.timeout().toNanos(), TimeUnit.NANOSECONDS);
      synchronized (this) {
        if (terminated) {
          t.cancel(false);
        } else {
          deadlineTimer = t;
        }
      }
    }
  }

  private void expire() {
    end(
        Status.DEADLINE_EXCEEDED
            .withMessage("the deadline of " + options.timeout() + " passed")
            .asException(),
        true);
  }

  @Override
  public void onNext(Payload payload) {
    Resp value;
    try {
      value = read(payload);
    } catch (RuntimeException e) { // a marshaller, a callback or the metadata failed
      end(e instanceof StatusException se ? se : Status.fromThrowable(e).asException(), true);
      return;
    } finally {
      payload.release();
    }
    if (value == null) {
      return;
    }
    boolean direct = false;
    synchronized (this) {
      if (terminated || failure != null) {
        return;
      }
      if (!emitting && (ready == null || ready.isEmpty()) && requested > 0) {
        emitting = true; // the common case: asked for and nothing waiting, so straight out
        direct = true;
        if (requested != Long.MAX_VALUE) {
          requested--;
        }
      } else {
        if (ready == null) {
          ready = new ArrayDeque<>(2);
        }
        ready.add(value);
      }
    }
    if (!direct) {
      drain();
      return;
    }
    downstream.onNext(value);
    boolean more;
    synchronized (this) {
      emitting = false;
      more = missed || failure != null || completed || (ready != null && !ready.isEmpty());
      missed = false;
    }
    if (more) {
      drain();
    }
  }

  /** The message a payload carries, or null when it carries none (a trailer alone). */
  private Resp read(Payload payload) {
    if (!routing && payload.hasMetadata()) {
      int read = readMetadata(payload.metadata(), sawHeaders, options, maxHeaderBytes);
      sawHeaders |= (read & TOLD_HEADERS) != 0;
      if ((read & NO_MESSAGE) != 0) {
        return null; // a trailer alone: the completion follows
      }
    }
    responses++;
    return marshaller.parse(payload.data());
  }

  /** {@link #readMetadata}: the headers were told. */
  static final int TOLD_HEADERS = 1;

  /** {@link #readMetadata}: the payload carries no message (a trailer alone). */
  static final int NO_MESSAGE = 2;

  /**
   * Reads a response payload's metadata: tells its headers (unless {@code headersSeen}) and its
   * trailers to the call's callbacks, and throws the status's exception when the status is a
   * failure; returns {@link #TOLD_HEADERS} and {@link #NO_MESSAGE} as they apply.
   */
  static int readMetadata(
      ByteBuf metadata, boolean headersSeen, CallOptions options, int maxHeaderBytes) {
    ResponseMetadata m = ResponseMetadata.decode(metadata, maxHeaderBytes);
    int read = 0;
    if (!m.headers().isEmpty() && !headersSeen) {
      read |= TOLD_HEADERS;
      if (options.headersCallback() != null) {
        options.headersCallback().accept(m.headers());
      }
    }
    Status status = m.status();
    if (status != null) {
      if (options.trailersCallback() != null) {
        options.trailersCallback().accept(m.trailers());
      }
      if (!status.isOk()) {
        throw status.asException(m.trailers());
      }
    }
    return m.noMessage() ? read | NO_MESSAGE : read;
  }

  @Override
  public void onError(Throwable t) {
    end(statusOf(t).asException(), false);
  }

  @Override
  public void onComplete() {
    if (oneResponse && responses == 0) {
      end(Status.INTERNAL.withMessage("the call ended without a response").asException(), false);
      return;
    }
    synchronized (this) {
      if (terminated || failure != null) {
        return;
      }
      completed = true;
    }
    drain();
  }

  /** Ends the call with a failure; {@code cancelCall} cancels it at the server too. */
  private void end(Throwable error, boolean cancelCall) {
    synchronized (this) {
      if (terminated || failure != null || completed) {
        return;
      }
      failure = error;
    }
    if (cancelCall) {
      Subscription s = upstream;
      if (s != null) {
        s.cancel();
      }
    }
    drain();
  }

  /** Signals what can go out: ready responses while asked for, then the end. */
  private void drain() {
    synchronized (this) {
      if (emitting) {
        missed = true;
        return;
      }
      emitting = true;
    }
    while (true) {
      Resp next = null;
      Throwable error = null;
      boolean complete = false;
      synchronized (this) {
        if (terminated) {
          emitting = false;
          return;
        }
        boolean empty = ready == null || ready.isEmpty();
        if (!empty && requested > 0) {
          next = ready.poll();
          if (requested != Long.MAX_VALUE) {
            requested--;
          }
        } else if (failure != null && (empty || requested == 0)) {
          error = failure;
          ready = null;
          terminated = true;
        } else if (completed && empty) {
          complete = true;
          terminated = true;
        } else if (missed) {
          missed = false;
          continue;
        } else {
          emitting = false;
          return;
        }
      }
      if (next != null) {
        downstream.onNext(next);
      } else {
        finished();
        if (error != null) {
          downstream.onError(error);
        } else if (complete) {
          downstream.onComplete();
        }
      }
    }
  }

  private void finished() {
    ScheduledFuture<?> t;
    synchronized (this) {
      t = deadlineTimer;
    }
    if (t != null) {
      t.cancel(false);
    }
    whenDone.run();
  }

  @Override
  public void request(long n) {
    Subscription s = upstream;
    if (n <= 0) {
      end(new IllegalArgumentException("request-n must be positive: " + n), true);
      return;
    }
    long forward = n;
    synchronized (this) {
      long r = requested + n;
      requested = r < 0 ? Long.MAX_VALUE : r;
      if (!askedOnce) {
        askedOnce = true;
        if (n != Long.MAX_VALUE) {
          forward = n + 1; // the unit the trailer may take
        }
      }
    }
    if (s != null) {
      s.request(forward);
    }
    drain();
  }

  @Override
  public void cancel() {
    boolean wasLive;
    synchronized (this) {
      wasLive = !terminated;
      terminated = true;
      ready = null;
    }
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
    if (wasLive) {
      finished();
    }
  }

  /**
   * The status a transport-level failure stands for: the peer's ERROR codes as gRPC clients see the
   * matching HTTP/2 failures, and "CODE: message" texts (a routing server's failures) read back.
   */
  static Status statusOf(Throwable t) {
    if (t instanceof StatusException e) {
      return e.status();
    }
    if (t instanceof NoRoomException) {
      return Status.RESOURCE_EXHAUSTED.withMessage(t.getMessage()).withCause(t);
    }
    if (t instanceof StreamErrorException e) {
      String message = e.getMessage();
      return switch (e.errorCode()) {
        case ErrorCode.APPLICATION_ERROR -> parseStatusText(message).withCause(t);
        case ErrorCode.CANCELED -> Status.CANCELLED.withMessage(message).withCause(t);
        case ErrorCode.INVALID -> Status.INTERNAL.withMessage(message).withCause(t);
        default -> Status.UNAVAILABLE.withMessage(message).withCause(t);
      };
    }
    return Status.UNKNOWN.withMessage(t.toString()).withCause(t);
  }

  /** {@code CODE: message} or {@code CODE} as {@link Status#toString()} writes it; else UNKNOWN. */
  static Status parseStatusText(String text) {
    if (text != null) {
      for (Status.Code c : Status.Code.values()) {
        if (c == Status.Code.OK) {
          continue; // a failure is never OK
        }
        if (text.equals(c.name())) {
          return Status.of(c);
        }
        if (text.startsWith(c.name()) && text.startsWith(": ", c.name().length())) {
          return Status.of(c).withMessage(text.substring(c.name().length() + 2));
        }
      }
    }
    return Status.UNKNOWN.withMessage(text);
  }
}
