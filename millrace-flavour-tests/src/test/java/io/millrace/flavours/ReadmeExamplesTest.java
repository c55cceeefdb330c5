package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.observer.ObserverHandler;
import io.millrace.observer.ObserverRequester;
import io.millrace.observer.ObserverResponder;
import io.millrace.observer.StreamObserver;
import io.millrace.reactor.ReactorHandler;
import io.millrace.reactor.ReactorRequester;
import io.millrace.reactor.ReactorResponder;
import io.millrace.streams.Payload;
import io.millrace.transport.netty.MillraceClient;
import io.millrace.transport.netty.MillraceServer;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The README's two examples, as written there (port 0 instead of a fixed one). */
class ReadmeExamplesTest {
  private static final List<String> HUNDRED =
      IntStream.range(0, 100).mapToObj(Integer::toString).collect(Collectors.toList());

  @Test
  void theReactorExample() throws Exception {
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .acceptor(
                (setup, connection) ->
                    ReactorResponder.of(
                        new ReactorHandler() {
                          @Override
                          public Mono<Payload> requestResponse(Payload p) {
                            return Mono.just(Payload.of("hello " + p.dataUtf8()));
                          }

                          @Override
                          public Flux<Payload> requestStream(Payload p) {
                            return Flux.range(0, 100).map(i -> Payload.of(Integer.toString(i)));
                          }
                        }))
            .bind();
    MillraceClient client = MillraceClient.builder().build();
    try {
      Connection connection = client.connect("127.0.0.1", server.port()).get();
      ReactorRequester requester = ReactorRequester.of(connection);
      String hello = requester.requestResponse(Payload.of("you")).map(Payload::dataUtf8).block();
      List<String> numbers =
          requester.requestStream(Payload.of("n")).map(Payload::dataUtf8).collectList().block();
      assertThat(hello).isEqualTo("hello you");
      assertThat(numbers).isEqualTo(HUNDRED);
    } finally {
      client.shutdownNow();
      server.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }

  @Test
  void theStreamObserverExample() throws Exception {
    MillraceServer server =
        MillraceServer.builder()
            .bindAddress("127.0.0.1", 0)
            .acceptor(
                (setup, connection) ->
                    ObserverResponder.of(
                        new ObserverHandler() {
                          @Override
                          public void requestStream(Payload p, StreamObserver<Payload> responses) {
                            for (int i = 0; i < 100; i++) {
                              responses.onNext(Payload.of(Integer.toString(i)));
                            }
                            responses.onCompleted();
                          }
                        }))
            .bind();
    MillraceClient client = MillraceClient.builder().build();
    try {
      Connection connection = client.connect("127.0.0.1", server.port()).get();
      List<String> printed = new CopyOnWriteArrayList<>();
      CompletableFuture<Void> done = new CompletableFuture<>();
      ObserverRequester.of(connection)
          .requestStream(
              Payload.of("n"),
              new StreamObserver<>() {
                @Override
                public void onNext(Payload p) {
                  printed.add(p.dataUtf8());
                }

                @Override
                public void onError(Throwable t) {
                  done.completeExceptionally(t);
                }

                @Override
                public void onCompleted() {
                  done.complete(null);
                }
              });
      done.get(10, TimeUnit.SECONDS);
      assertThat(printed).isEqualTo(HUNDRED);
    } finally {
      client.shutdownNow();
      server.shutdownNow();
      client.awaitTermination(10, TimeUnit.SECONDS);
      server.awaitTermination(10, TimeUnit.SECONDS);
    }
  }
}
