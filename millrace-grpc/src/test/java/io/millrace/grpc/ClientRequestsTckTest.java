package io.millrace.grpc;

import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link ClientRequests}, what a gRPC client call sends as the
 * Publisher a Millrace call reads, fed the way grpc-java callers send: on each onReady (run on a
 * listener thread of its own, as the call's callbacks are), messages while {@code isReady()}, then
 * the half-close after the last.
 */
public class ClientRequestsTckTest extends PublisherVerification<Long> {

  public ClientRequestsTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    AtomicReference<ClientRequests<Long>> self = new AtomicReference<>();
    long[] sent = {0}; // the listener thread's
    boolean[] closed = {false};
    Runnable feed =
        () -> {
          ClientRequests<Long> r = self.get();
          while (sent[0] < elements && r.isReady()) {
            r.send(sent[0]++);
          }
          if (sent[0] == elements && !closed[0]) {
            closed[0] = true;
            r.halfClose();
          }
        };
    ClientRequests<Long> requests =
        new ClientRequests<>(() -> RequestPublisherTckTest.LISTENER.execute(feed));
    self.set(requests);
    if (elements == 0) {
      RequestPublisherTckTest.LISTENER.execute(feed);
    }
    return requests;
  }

  /** A call that failed before the Millrace call read its requests: told without demand. */
  @Override
  public Publisher<Long> createFailedPublisher() {
    ClientRequests<Long> requests = new ClientRequests<>(() -> {});
    requests.fail(new IllegalStateException("failed on purpose"));
    return requests;
  }

  @Override
  public long maxElementsFromPublisher() {
    return Long.MAX_VALUE - 1;
  }
}
