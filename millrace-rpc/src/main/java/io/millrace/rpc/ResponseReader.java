package io.millrace.rpc;

import io.millrace.core.NoRoomException;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
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
 * call and fails it with DEADLINE_EXCEEDED; emissions are then serialized with a lock.
 */
final class ResponseReader<Resp> implements Publisher<Resp>, Subscriber<Payload>, Subscription {
  private final Supplier<Publisher<Payload>> call;
  private final Marshaller<Resp> marshaller;
  private final CallOptions options;
  private final boolean oneResponse;
  private final boolean routing;
  private final int maxHeaderBytes;
  private final ScheduledExecutorService timers;

  private Subscriber<? super Resp> downstream;
  private volatile Subscription upstream;
  private volatile boolean done;
  private boolean sawHeaders;
  private int responses;
  private ScheduledFuture<?> deadlineTimer;

  ResponseReader(
      Supplier<Publisher<Payload>> call,
      Marshaller<Resp> marshaller,
      CallOptions options,
      boolean oneResponse,
      boolean routing,
      int maxHeaderBytes,
      ScheduledExecutorService timers) {
    this.call = call;
    this.marshaller = marshaller;
    this.options = options;
    this.oneResponse = oneResponse;
    this.routing = routing;
    this.maxHeaderBytes = maxHeaderBytes;
    this.timers = timers;
  }

  @Override
  public void subscribe(Subscriber<? super Resp> subscriber) {
    if (downstream != null) {
      // Each subscription is its own call: a fresh reader carries it.
      new ResponseReader<>(call, marshaller, options, oneResponse, routing, maxHeaderBytes, timers)
          .subscribe(subscriber);
      return;
    }
    downstream = subscriber;
    if (options.timeout() != null && options.timeout().isZero()) {
      done = true;
      subscriber.onSubscribe(this);
      subscriber.onError(
          Status.DEADLINE_EXCEEDED
              .withMessage("the deadline passed before the call")
              .asException());
      return;
    }
    Publisher<Payload> payloads;
    try {
      payloads = call.get();
    } catch (RuntimeException e) {
      done = true;
      subscriber.onSubscribe(this);
      subscriber.onError(Status.fromThrowable(e).asException());
      return;
    }
    payloads.subscribe(this);
  }

  long timeoutMicros() {
    return options.timeout() == null
        ? CallHeader.NO_TIMEOUT
        : Math.max(0, options.timeout().toNanos() / 1_000);
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream = s;
    if (options.timeout() != null) {
      deadlineTimer =
          timers.schedule(this::expire, options.timeout().toNanos(), TimeUnit.NANOSECONDS);
    }
    downstream.onSubscribe(this);
  }

  private void expire() {
    synchronized (this) {
      if (done) {
        return;
      }
      done = true;
    }
    upstream.cancel();
    downstream.onError(
        Status.DEADLINE_EXCEEDED
            .withMessage("the deadline of " + options.timeout() + " passed")
            .asException());
  }

  @Override
  public void onNext(Payload payload) {
    if (deadlineTimer != null) {
      synchronized (this) {
        read(payload);
      }
    } else {
      read(payload);
    }
  }

  private void read(Payload payload) {
    if (done) {
      payload.release();
      return;
    }
    Resp value;
    try {
      if (!routing && payload.hasMetadata()) {
        ResponseMetadata m = ResponseMetadata.decode(payload.metadata(), maxHeaderBytes);
        if (!m.headers().isEmpty() && !sawHeaders) {
          sawHeaders = true;
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
            fail(status.asException(m.trailers()), true);
            return;
          }
        }
        if (m.noMessage()) {
          return; // a trailer alone: the completion follows
        }
      }
      value = marshaller.parse(payload.data());
    } catch (StatusException e) {
      fail(e, true);
      return;
    } finally {
      payload.release();
    }
    responses++;
    downstream.onNext(value);
  }

  private void fail(StatusException e, boolean cancelCall) {
    done = true;
    cancelTimer();
    if (cancelCall) {
      upstream.cancel();
    }
    downstream.onError(e);
  }

  @Override
  public void onError(Throwable t) {
    synchronized (this) {
      if (done) {
        return;
      }
      done = true;
    }
    cancelTimer();
    downstream.onError(statusOf(t).asException());
  }

  @Override
  public void onComplete() {
    synchronized (this) {
      if (done) {
        return;
      }
      done = true;
    }
    cancelTimer();
    if (oneResponse && responses == 0) {
      downstream.onError(
          Status.INTERNAL.withMessage("the call ended without a response").asException());
    } else {
      downstream.onComplete();
    }
  }

  @Override
  public void request(long n) {
    Subscription s = upstream;
    if (s != null) {
      s.request(n);
    }
  }

  @Override
  public void cancel() {
    done = true;
    cancelTimer();
    Subscription s = upstream;
    if (s != null) {
      s.cancel();
    }
  }

  private void cancelTimer() {
    ScheduledFuture<?> t = deadlineTimer;
    if (t != null) {
      t.cancel(false);
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
      int colon = text.indexOf(':');
      String code = colon < 0 ? text : text.substring(0, colon);
      for (Status.Code c : Status.Code.values()) {
        if (c.name().equals(code)) {
          return Status.of(c)
              .withMessage(colon < 0 ? null : text.substring(Math.min(text.length(), colon + 2)));
        }
      }
    }
    return Status.UNKNOWN.withMessage(text);
  }
}
