package io.millrace.interop;

import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A Millrace requester's listener that records what arrives; the test thread reads it. {@link
 * #done} completes on onComplete and fails with a {@link StreamError} on onError.
 */
class MillraceRecorder implements StreamListener {
  final List<Received> items = new CopyOnWriteArrayList<>();
  final CompletableFuture<Void> done = new CompletableFuture<>();
  private final int cancelAfter;

  MillraceRecorder() {
    this(0);
  }

  /** Cancels the stream from onNext once {@code cancelAfter} payloads arrived (0: never). */
  MillraceRecorder(int cancelAfter) {
    this.cancelAfter = cancelAfter;
  }

  @Override
  public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
    items.add(new Received(Interop.utf8(data), Interop.utf8(metadata)));
    if (cancelAfter > 0 && items.size() == cancelAfter) {
      stream.cancel();
    }
  }

  @Override
  public void onComplete(Stream stream) {
    done.complete(null);
  }

  @Override
  public void onError(Stream stream, int errorCode, String message) {
    done.completeExceptionally(new StreamError(errorCode, message));
  }

  void awaitComplete() throws InterruptedException, ExecutionException, TimeoutException {
    done.get(Interop.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Waits for the stream to fail and returns the error. */
  StreamError awaitError() throws InterruptedException, TimeoutException {
    try {
      done.get(Interop.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StreamError error) {
        return error;
      }
      throw new AssertionError(e);
    }
    throw new AssertionError("the stream completed instead of failing: " + items);
  }

  /** An ERROR that ended a Millrace stream. */
  static final class StreamError extends Exception {
    private static final long serialVersionUID = 1L;
    final int code;

    StreamError(int code, String message) {
      super(message);
      this.code = code;
    }
  }
}
