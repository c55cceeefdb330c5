package io.millrace.futures;

import io.millrace.core.Connection;
import io.millrace.core.NoRoomException;
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
 * <p>Backpressure: when the connection's hand-off to its event loop has no room ({@link
 * NoRoomException}: too many calls wait for the loop, or the peer is not reading), a
 * request-response or fire-and-forget waits for room and sends again, so a thread that calls in a
 * loop goes at the connection's pace instead of failing. Only that refusal waits: a reconnecting
 * connection between connections applies its own policy (wait, or fail at once) as before. A
 * request-response's timeout counts the wait. A stream's request is not retried: it fails with the
 * refusal.
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
    checkNotOnLoop(payload);
    return callWaitingForRoom(payload, deadline(timeout));
  }

  /**
   * Returns once the payload is handed to the connection: straight to it, with no Publisher or
   * future on the way. Throws {@link StreamErrorException} REJECTED, with nothing sent, when the
   * connection is already closed or draining when called. What only the event loop can know (the
   * connection closing after the payload was handed over, or no lease) the connection logs: a
   * fire-and-forget from another thread has nobody else to tell, and waiting for the loop's verdict
   * would cost every send a round trip between threads.
   */
  public void fireAndForget(Payload payload) {
    checkNotOnLoop(payload);
    Connection c = requester.connection();
    while (true) {
      if (!c.isOpen() || c.isDraining()) { // (again after each wait for room)
        payload.release();
        throw StreamErrorException.received(
            ErrorCode.REJECTED,
            "not sent: the connection is " + (c.isOpen() ? "draining" : "closed"));
      }
      payload.retain(); // kept: the send takes one reference, a refusal releases it
      boolean sent;
      try {
        sent = c.fireAndForget(payload.metadata(), payload.data());
      } catch (NoRoomException full) {
        try {
          awaitRoom(c, NO_DEADLINE); // the kept reference goes on to the next round
        } catch (RuntimeException e) {
          payload.release();
          throw e;
        }
        continue;
      } catch (RuntimeException e) {
        payload.release();
        throw e;
      }
      payload.release();
      if (!sent) {
        throw StreamErrorException.received(
            ErrorCode.REJECTED, "not sent: the connection is closing or has no lease");
      }
      return;
    }
  }

  /**
   * The responder's stream, read by blocking; the request is sent now. Close the result to stop
   * early (try-with-resources). Payloads are asked for ahead of the reader: about a mebibyte of
   * them by their average size (between two and 4,096), plus {@link StreamsOptions#prefetch()}
   * below that.
   */
  public BlockingStream requestStream(Payload payload) {
    checkNotOnLoop(payload);
    BlockingIterator iterator = new BlockingIterator();
    requester.requestStream(payload).subscribe(iterator);
    return iterator;
  }

  private static void checkNotOnLoop(Payload payload) {
    if (ThreadExecutorMap.currentExecutor() != null) {
      payload.release();
      throw new IllegalStateException(
          "a blocking call on an event loop would stall its connections (or wait for itself)");
    }
  }

  /**
   * Makes a request-response and waits for its answer, waiting for room and calling again while the
   * connection refuses it with {@link NoRoomException}. A reference to the payload is kept across
   * each send, since a refusal releases what it refuses: one reference-count increment and
   * decrement per call, which a blocking call can afford.
   */
  private Payload callWaitingForRoom(Payload payload, long deadline) {
    Connection c = requester.connection();
    while (true) {
      payload.retain(); // kept: the send takes one reference, a refusal releases it
      FutureSubscriber<Payload> call = new FutureSubscriber<>();
      requester.requestResponse(payload).subscribe(call);
      try {
        Payload result = await(call, deadline);
        payload.release();
        return result;
      } catch (NoRoomException full) {
        try {
          awaitRoom(c, deadline); // the kept reference goes on to the next round
        } catch (RuntimeException e) {
          payload.release();
          throw e;
        }
      } catch (RuntimeException e) {
        payload.release();
        throw e;
      }
    }
  }

  /**
   * Waits until the hand-off has room, the connection closes, or {@code deadline} passes (CANCELED
   * then). A connection that refuses to wait (closing) ends the wait: the next send fails as it
   * says.
   */
  private static void awaitRoom(Connection c, long deadline) {
    try {
      while (!c.isReadyForCalls() && c.isOpen()) {
        long wait = ROOM_CHECK.toNanos();
        if (deadline != NO_DEADLINE) {
          long left = left(deadline);
          if (left <= 0) {
            throw StreamErrorException.received(
                ErrorCode.CANCELED, "no room to send within the timeout: not sent");
          }
          wait = Math.min(wait, left);
        }
        long start = System.nanoTime();
        if (!c.awaitReadyForCalls(Duration.ofNanos(wait)) && System.nanoTime() - start < wait / 2) {
          return; // refused at once: closing
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw StreamErrorException.received(
          ErrorCode.CANCELED, "interrupted while waiting for room: not sent");
    }
  }

  private static final long NO_DEADLINE = Long.MAX_VALUE;

  private static long deadline(Duration timeout) {
    if (timeout == null) {
      return NO_DEADLINE;
    }
    long nanos;
    try {
      nanos = timeout.toNanos();
    } catch (ArithmeticException e) {
      return NO_DEADLINE; // beyond 292 years
    }
    long d = System.nanoTime() + nanos;
    return d == NO_DEADLINE ? d - 1 : d;
  }

  private static long left(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  /** How long one wait for room lasts before the connection is checked again. */
  private static final Duration ROOM_CHECK = Duration.ofSeconds(1);

  private static <T> T await(FutureSubscriber<T> call, long deadline) {
    try {
      return deadline == NO_DEADLINE ? call.get() : call.get(left(deadline), TimeUnit.NANOSECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException
          ? (RuntimeException) cause
          : StreamErrorException.received(ErrorCode.APPLICATION_ERROR, String.valueOf(cause));
    } catch (TimeoutException e) {
      if (!call.cancel(false)) {
        return await(call, NO_DEADLINE); // it came in the meantime
      }
      throw StreamErrorException.received(ErrorCode.CANCELED, "no answer within the timeout");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (!call.cancel(false)) {
        // It came in the meantime: the caller's, with the interrupt kept (a done future's get
        // does not wait, so does not throw), as the timeout's path keeps it; dropped, a pooled
        // answer would leak.
        return await(call, NO_DEADLINE);
      }
      throw StreamErrorException.received(
          ErrorCode.CANCELED, "interrupted while waiting: cancelled");
    } catch (CancellationException e) {
      throw StreamErrorException.received(ErrorCode.CANCELED, "cancelled");
    }
  }
}
