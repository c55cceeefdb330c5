package io.millrace.flavours;

import io.millrace.core.Connection;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import java.util.concurrent.TimeUnit;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;
import org.testng.annotations.Factory;
import reactor.core.publisher.Mono;

/**
 * The Reactive Streams TCK on the Monos the Reactor requester makes itself (over the engine's
 * Publisher, without {@code Mono.fromDirect}): request-response, one element or none, and
 * fire-and-forget, none.
 */
public class ReactorRequesterTckTest extends PublisherVerification<Object> {
  private final boolean fireAndForget;
  private Server server;
  private MillraceClient client;
  private ReactorRequester requester;

  @Factory
  public static Object[] both() {
    return new Object[] {new ReactorRequesterTckTest(false), new ReactorRequesterTckTest(true)};
  }

  public ReactorRequesterTckTest(boolean fireAndForget) {
    super(new TestEnvironment(2_000, 50), 1_000);
    this.fireAndForget = fireAndForget;
  }

  @BeforeClass
  public void start() throws Exception {
    server =
        Server.millrace(
            ReactorResponder.of(
                new ReactorHandler() {
                  @Override
                  public Mono<Payload> requestResponse(Payload payload) {
                    boolean empty = payload.dataUtf8().equals("empty");
                    return empty ? Mono.empty() : Mono.just(payload);
                  }

                  @Override
                  public Mono<Void> fireAndForget(Payload payload) {
                    return Mono.empty();
                  }
                }));
    client = MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
    Connection connection = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
    requester = ReactorRequester.of(connection);
  }

  @AfterClass
  public void stop() throws Exception {
    client.shutdownNow();
    client.awaitTermination(10, TimeUnit.SECONDS);
    server.close();
  }

  @Override
  public long maxElementsFromPublisher() {
    return fireAndForget ? 0 : 1;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Publisher<Object> createPublisher(long elements) {
    Mono<?> call =
        fireAndForget
            ? requester.fireAndForget(Payload.of("ping"))
            : requester.requestResponse(Payload.of(elements == 0 ? "empty" : "one"));
    return (Publisher<Object>) call;
  }

  @Override
  public Publisher<Object> createFailedPublisher() {
    return null; // a call fails only once it is made, which needs demand (as the engine's TCK runs)
  }
}
