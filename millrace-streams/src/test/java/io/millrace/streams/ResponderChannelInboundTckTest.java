package io.millrace.streams;

import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import reactor.core.publisher.Flux;

/**
 * The Reactive Streams TCK on the Publisher a responder's handler gets for a channel's inbound
 * payloads: the client opens a channel with a first payload and n more.
 */
public class ResponderChannelInboundTckTest extends PublisherVerification<Payload> {
  private final LinkedTransferQueue<Publisher<Payload>> inbounds = new LinkedTransferQueue<>();
  private Pair pair;

  public ResponderChannelInboundTckTest() {
    super(new TestEnvironment(2_000, 50), 1_000);
  }

  @BeforeClass
  public void start() throws Exception {
    pair =
        new Pair(
            ReactiveResponder.of(
                new ReactiveHandler() {
                  @Override
                  public Publisher<Payload> requestChannel(
                      Payload first, Publisher<Payload> inbound) {
                    inbounds.add(inbound);
                    return Flux.never();
                  }
                }));
  }

  @AfterClass
  public void stop() {
    pair.close();
  }

  @Override
  public Publisher<Payload> createPublisher(long elements) {
    Flux<Payload> later =
        Flux.<Payload, Long>generate(
                () -> 0L,
                (i, sink) -> {
                  sink.next(Payload.of(Long.toString(i)));
                  return i + 1;
                })
            .take(elements, true);
    return opened(Flux.concat(Flux.just(Payload.of("first")), later));
  }

  /** The inbound payloads of a channel the requester opens with {@code payloads}. */
  private Publisher<Payload> opened(Flux<Payload> payloads) {
    Flux.from(pair.requester().requestChannel(payloads))
        .subscribe(p -> {}, e -> {}); // ends with the connection
    try {
      Publisher<Payload> inbound = inbounds.poll(5, TimeUnit.SECONDS);
      if (inbound == null) {
        throw new AssertionError("the server did not open the channel");
      }
      return inbound;
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * The requester's payloads fail after the first: the responder's inbound payloads end with that
   * error, told without demand.
   */
  @Override
  public Publisher<Payload> createFailedPublisher() {
    return opened(
        Flux.concat(
            Flux.just(Payload.of("first")),
            Flux.error(new IllegalStateException("the requester's payloads failed"))));
  }
}
