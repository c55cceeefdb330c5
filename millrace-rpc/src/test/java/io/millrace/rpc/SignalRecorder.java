package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

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
class SignalRecorder<T> implements Subscriber<T> {
  final List<String> signals = new CopyOnWriteArrayList<>();
  final CountDownLatch ended = new CountDownLatch(1);
  final long initialRequest;
  volatile Subscription subscription;

  SignalRecorder(long initialRequest) {
    this.initialRequest = initialRequest;
  }

  /** How an item is written in {@link #signals}. */
  String text(T item) {
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

  List<String> awaitEnd() throws InterruptedException {
    assertThat(ended.await(5, TimeUnit.SECONDS)).as("the call ended").isTrue();
    return signals;
  }
}
