package io.millrace.futures;

import io.millrace.core.Connection;
import io.millrace.core.StreamErrorException;
import io.millrace.frame.ErrorCode;
import io.millrace.futures.internal.BlockingIterator;
import io.millrace.futures.internal.FutureSubscriber;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.util.internal.ThreadExecutorMap;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Blocking calls: the calling thread waits for the answer. Made for virtual threads: waiting parks
 * the thread (no monitors are held on the way), so a virtual thread unmounts while it waits and a
 * server can run one per request. Never call from the connection's event loop (it would wait for
 * itself), nor from any other Netty event loop (it would stall that loop's connections): such a
 * call fails with IllegalStateException.
 *
 * <p>Failures throw {@link StreamErrorException} (the peer's ERROR, or the connection's loss); a
 * timeout or an interrupt cancels the call (CANCEL to the peer) and throws a StreamErrorException
 * with code CANCELED, the interrupt flag set again after an interrupt.
 *
 * <p>Backpressure: each call first waits while the connection's hand-off to its event loop is full
 * ({@link Connection#isReadyForCalls()}), so a thread that calls in a loop goes at the connection's
 * pace instead of failing with RejectedExecutionException. The wait ends when there is room, or the
 * connection closes or drains (the call then fails as the connection says), or a request-response's
 * timeout passes. It is a check before the send: many threads that pass it together can still fill
 * the hand-off, and the call that does not fit fails with RejectedExecutionException.
 */
public final class BlockingRequester {
  private final ReactiveRequester requester;

  private BlockingRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static BlockingRequester of(Connection connection) {
    return new BlockingRequester(ReactiveRequester.of(connection));
  }

  public static BlockingRequester of(Connection connection, StreamsOptions options) {
    return new BlockingRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  /** The answer (null if the responder completed without one), waiting as long as it takes. */
  public Payload requestResponse(Payload payload) {
    return requestResponse(payload, null);
  }

  /** The answer, or CANCELED once {@code timeout} has passed (the call is cancelled then). */
  public Payload requestResponse(Payload payload, Duration timeout) {
    if (timeout == null) {
      beforeCall(payload, Long.MAX_VALUE);
    } else {
      long deadline = System.nanoTime() + timeout.toNanos();
      beforeCall(payload, deadline); // the wait for room counts in the timeout
      timeout = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
    }
    FutureSubscriber<Payload> answer = new FutureSubscriber<>();
    requester.requestResponse(payload).subscribe(answer);
    return await(answer, timeout);
  }

  /** Returns once the payload is handed to the connection. */
  public void fireAndForget(Payload payload) {
    beforeCall(payload, Long.MAX_VALUE);
    FutureSubscriber<Void> sent = new FutureSubscriber<>();
    requester.fireAndForget(payload).subscribe(sent);
    await(sent, null);
  }

  /**
   * The responder's stream, read by blocking; the request is sent now. Close the result to stop
   * early (try-with-resources). At most 1.25 times {@link StreamsOptions#prefetch()} payloads wait
   * ahead of the reader.
   */
  public BlockingStream requestStream(Payload payload) {
    beforeCall(payload, Long.MAX_VALUE);
    BlockingIterator iterator = new BlockingIterator(requester.options().prefetch());
    requester.requestStream(payload).subscribe(iterator);
    return iterator;
  }

  /**
   * Fails on any event loop; else waits while the connection's hand-off is full, until {@code
   * deadline} ({@link System#nanoTime()}; {@link Long#MAX_VALUE}: none).
   */
  private void beforeCall(Payload payload, long deadline) {
    if (ThreadExecutorMap.currentExecutor() != null) {
      payload.release();
      throw new IllegalStateException(
          "a blocking call on an event loop would stall its connections (or wait for itself)");
    }
    Connection c = requester.connection();
    try {
      while (!c.isReadyForCalls() && c.isOpen() && !c.isDraining()) {
        long wait = ROOM_CHECK.toNanos();
        if (deadline != Long.MAX_VALUE) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            payload.release();
            throw StreamErrorException.received(
                ErrorCode.CANCELED, "no room to send within the timeout: not sent");
          }
          wait = Math.min(wait, left);
        }
        long start = System.nanoTime();
        if (!c.awaitReadyForCalls(Duration.ofNanos(wait)) && System.nanoTime() - start < wait / 2) {
          break; // refused at once (closing): the call goes ahead and fails as the connection says
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      payload.release();
      throw StreamErrorException.received(
          ErrorCode.CANCELED, "interrupted while waiting for room: not sent");
    }
  }

  /** How long one wait for room lasts before the connection is checked again. */
  private static final Duration ROOM_CHECK = Duration.ofSeconds(1);

  private static <T> T await(FutureSubscriber<T> call, Duration timeout) {
    try {
      return timeout == null ? call.get() : call.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException
          ? (RuntimeException) cause
          : StreamErrorException.received(ErrorCode.APPLICATION_ERROR, String.valueOf(cause));
    } catch (TimeoutException e) {
      if (!call.cancel(false)) {
        return await(call, null); // it came in the meantime
      }
      throw StreamErrorException.received(ErrorCode.CANCELED, "no answer within " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      call.cancel(false);
      throw StreamErrorException.received(
          ErrorCode.CANCELED, "interrupted while waiting: cancelled");
    } catch (CancellationException e) {
      throw StreamErrorException.received(ErrorCode.CANCELED, "cancelled");
    }
  }
}
