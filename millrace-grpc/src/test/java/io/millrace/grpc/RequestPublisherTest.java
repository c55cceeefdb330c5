package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * A gRPC caller's requests as a Publisher, without sockets: what it asks of gRPC, what it signals.
 */
class RequestPublisherTest {

  /** Counts what the publisher asks of gRPC; nothing else is used. */
  private static final class Asked extends QuietServerCall<String, String> {}

  /**
   * Rule 1.3: a request(0) made on another thread while onNext runs (a subscriber's bug, rule 3.9)
   * gets its onError after that onNext has returned, never during it.
   */
  @Test
  void aBadRequestDuringOnNext_isAnsweredAfterIt_notAlongsideIt() {
    Asked call = new Asked();
    RequestPublisher<String> requests = new RequestPublisher<>(call);
    List<String> signals = new CopyOnWriteArrayList<>();
    Subscription[] subscription = new Subscription[1];
    requests.subscribe(
        new Subscriber<>() {
          volatile boolean inOnNext;

          @Override
          public void onSubscribe(Subscription s) {
            subscription[0] = s;
            s.request(1);
          }

          @Override
          public void onNext(String message) {
            inOnNext = true;
            Thread other = new Thread(() -> subscription[0].request(0));
            other.start();
            try {
              other.join(); // the bad request has returned before this onNext does
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            signals.add("onNext " + message);
            inOnNext = false;
          }

          @Override
          public void onError(Throwable t) {
            signals.add((inOnNext ? "onError during onNext: " : "onError: ") + t.getMessage());
          }

          @Override
          public void onComplete() {
            signals.add("onComplete");
          }
        });
    assertThat(call.requested).hasValue(1);
    requests.onMessage("m");
    assertThat(signals).containsExactly("onNext m", "onError: rule 3.9: request(0)");
    requests.onHalfClose();
    assertThat(signals).as("nothing after the error").hasSize(2);
  }
}
