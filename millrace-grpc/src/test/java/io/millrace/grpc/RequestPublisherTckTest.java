package io.millrace.grpc;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * The Reactive Streams TCK on {@link RequestPublisher}, a gRPC caller's requests as the Publisher a
 * Millrace handler reads, over a server call that delivers what is asked of it the way gRPC does:
 * from a listener thread of its own, one callback at a time, the half-close after the last.
 */
public class RequestPublisherTckTest extends PublisherVerification<Long> {
  /** gRPC's listener thread for every call here; a daemon, left to the JVM's exit. */
  static final Executor LISTENER =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "grpc-listener");
            t.setDaemon(true);
            return t;
          });

  public RequestPublisherTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  /** A call whose client sends {@code total} messages (0, 1, 2, ...) as they are asked for. */
  private static final class Feeding extends QuietServerCall<Long, Void> {
    private final long total;
    private long sent; // the listener thread's
    private RequestPublisher<Long> requests;

    Feeding(long total) {
      this.total = total;
    }

    RequestPublisher<Long> start() {
      requests = new RequestPublisher<>(this);
      if (total == 0) {
        LISTENER.execute(requests::onHalfClose);
      }
      return requests;
    }

    @Override
    public void request(int numMessages) {
      LISTENER.execute(
          () -> {
            for (int i = 0; i < numMessages && sent < total; i++) {
              requests.onMessage(sent++);
              if (sent == total) {
                requests.onHalfClose();
              }
            }
          });
    }
  }

  @Override
  public Publisher<Long> createPublisher(long elements) {
    return new Feeding(elements).start();
  }

  /** A call cancelled before the handler read it: its requests fail, told without demand. */
  @Override
  public Publisher<Long> createFailedPublisher() {
    RequestPublisher<Long> requests = new RequestPublisher<>(new QuietServerCall<>());
    requests.onCancel(io.millrace.rpc.Status.CANCELLED.withMessage("failed on purpose"));
    return requests;
  }

  @Override
  public long maxElementsFromPublisher() {
    return Long.MAX_VALUE - 1;
  }
}
