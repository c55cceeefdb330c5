package io.millrace.interop;

import io.rsocket.Payload;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;

/**
 * An rsocket-java subscriber that records (and releases) what arrives, grants demand only when told
 * to, and notes whether the publisher ever sent more than was requested.
 */
final class JavaRecorder extends BaseSubscriber<Payload> {
  final List<Received> items = new CopyOnWriteArrayList<>();
  final CompletableFuture<Void> done = new CompletableFuture<>();
  final AtomicLong requested = new AtomicLong();
  volatile boolean overflowed;
  private final long initialRequest;
  private final int cancelAfter;

  private JavaRecorder(long initialRequest, int cancelAfter) {
    this.initialRequest = initialRequest;
    this.cancelAfter = cancelAfter;
  }

  static JavaRecorder unbounded() {
    return new JavaRecorder(Long.MAX_VALUE, 0);
  }

  /** Requests {@code initialRequest} on subscribe and more only through {@link #grant}. */
  static JavaRecorder requesting(long initialRequest) {
    return new JavaRecorder(initialRequest, 0);
  }

  /** Requests {@code initialRequest}, then cancels once {@code cancelAfter} payloads arrived. */
  static JavaRecorder cancellingAfter(long initialRequest, int cancelAfter) {
    return new JavaRecorder(initialRequest, cancelAfter);
  }

  void grant(long n) {
    requested.addAndGet(n);
    request(n);
  }

  @Override
  protected void hookOnSubscribe(Subscription subscription) {
    if (initialRequest > 0) {
      grant(initialRequest);
    }
  }

  @Override
  protected void hookOnNext(Payload payload) {
    items.add(Interop.receive(payload));
    if (items.size() > requested.get()) {
      overflowed = true;
    }
    if (cancelAfter > 0 && items.size() == cancelAfter) {
      cancel();
    }
  }

  @Override
  protected void hookOnComplete() {
    done.complete(null);
  }

  @Override
  protected void hookOnError(Throwable throwable) {
    done.completeExceptionally(throwable);
  }

  void awaitComplete() throws InterruptedException, ExecutionException, TimeoutException {
    done.get(Interop.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
  }
}
