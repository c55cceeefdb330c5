package io.millrace.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Records the signals a subscriber hears as text ("next v", "error message", "complete"), and
 * requests {@code initialRequest} in onSubscribe unless it is 0.
 */
public class SignalRecorder<T> implements Subscriber<T> {
  public final List<String> signals = new CopyOnWriteArrayList<>();
  public final CountDownLatch ended = new CountDownLatch(1);
  public final long initialRequest;
  public volatile Subscription subscription;

  public SignalRecorder(long initialRequest) {
    this.initialRequest = initialRequest;
  }

  /** How an item is written in {@link #signals}. */
  protected String text(T item) {
    return String.valueOf(item);
  }

  @Override
  public void onSubscribe(Subscription s) {
    subscription = s;
    if (initialRequest != 0) {
      s.request(initialRequest);
    }
  }

  @Override
  public void onNext(T v) {
    signals.add("next " + text(v));
  }

  @Override
  public void onError(Throwable t) {
    signals.add("error " + t.getMessage());
    ended.countDown();
  }

  @Override
  public void onComplete() {
    signals.add("complete");
    ended.countDown();
  }

  /** The signals once the end came (within five seconds, else the test fails). */
  public List<String> awaitEnd() throws InterruptedException {
    if (!ended.await(5, TimeUnit.SECONDS)) {
      throw new AssertionError("the call did not end: " + signals);
    }
    return signals;
  }
}
