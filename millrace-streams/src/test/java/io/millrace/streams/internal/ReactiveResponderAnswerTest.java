package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.StreamListener;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveResponder;
import io.netty.buffer.ByteBuf;
import io.netty.channel.DefaultEventLoop;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * A request-response whose handler gives an answer known at once ({@link Scalar}: {@code Mono.just}
 * and the like) is answered by the responder without subscribing to it, on a stand-in stream
 * without sockets; one the stream cannot take yet waits in a sink as any other answer.
 */
class ReactiveResponderAnswerTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final AnswerStream fake = new AnswerStream(loop);

  @AfterEach
  void stop() throws InterruptedException {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  /**
   * An answer whose outcome is {@code outcome}'s, and which counts its subscriptions (it signals
   * the same outcome to a subscriber, as Reactor's scalar Monos do).
   */
  private static final class Known implements Publisher<Payload>, Callable<Payload> {
    final Callable<Payload> outcome;
    final AtomicInteger subscribed = new AtomicInteger();

    Known(Callable<Payload> outcome) {
      this.outcome = outcome;
    }

    @Override
    public Payload call() throws Exception {
      return outcome.call();
    }

    @Override
    public void subscribe(Subscriber<? super Payload> s) {
      subscribed.incrementAndGet();
      Scalar.taken(this).subscribe(s);
    }
  }

  /**
   * Serves one request-response answered with {@code answer}, on the loop; returns the listener.
   */
  private StreamListener serve(Publisher<Payload> answer) throws Exception {
    ReactiveHandler handler =
        new ReactiveHandler() {
          @Override
          public Publisher<Payload> requestResponse(Payload payload) {
            payload.release();
            return answer;
          }
        };
    ByteBuf request = Buffers.direct("ask");
    try {
      return loop.submit(
              () -> ReactiveResponder.of(handler).requestResponse(fake.stream, null, request))
          .get(5, TimeUnit.SECONDS);
    } finally {
      request.release(); // lent for the call, as the engine lends it
    }
  }

  @Test
  void aKnownAnswerGoesOutAtOnce_unsubscribed() throws Exception {
    Known answer = new Known(() -> Payload.of(Buffers.direct("ok")));
    StreamListener listener = serve(answer);
    assertThat(fake.events).containsExactly("next ok");
    assertThat(fake.threads).allMatch(t -> t.startsWith("defaultEventLoop"));
    assertThat(answer.subscribed).hasValue(0);
    assertThat(listener).isNotInstanceOf(AnswerSink.class);
  }

  @Test
  void aKnownEmptyAnswerCompletesTheStream() throws Exception {
    Known answer = new Known(() -> null);
    serve(answer);
    assertThat(fake.events).containsExactly("complete");
    assertThat(answer.subscribed).hasValue(0);
  }

  @Test
  void aKnownFailureFailsTheStream() throws Exception {
    Known answer =
        new Known(
            () -> {
              throw new IllegalStateException("no");
            });
    serve(answer);
    assertThat(fake.events).containsExactly("fail IllegalStateException");
    assertThat(answer.subscribed).hasValue(0);
  }

  @Test
  void aKnownAnswerThatThrowsAnError_failsItsStreamOnly() throws Exception {
    Known answer =
        new Known(
            () -> {
              throw new StackOverflowError();
            });
    serve(answer); // does not throw into the engine, which would close the connection
    assertThat(fake.events).containsExactly("fail StackOverflowError");
  }

  @Test
  void aKnownAnswerTheStreamCannotTakeYet_waitsInASink_untilItIsReady() throws Exception {
    fake.ready = false;
    Known answer = new Known(() -> Payload.of(Buffers.direct("later")));
    StreamListener listener = serve(answer);
    assertThat(listener).isInstanceOf(AnswerSink.class);
    assertThat(answer.subscribed).hasValue(1);
    assertThat(fake.events).isEmpty();
    fake.ready = true;
    loop.submit(() -> listener.onReady(fake.stream)).get(5, TimeUnit.SECONDS);
    assertThat(fake.events).containsExactly("next later");
  }

  @Test
  void anAnswerNotKnownAtOnce_isSubscribedAsBefore() throws Exception {
    AtomicInteger subscribed = new AtomicInteger();
    Publisher<Payload> answer =
        s -> {
          subscribed.incrementAndGet();
          Scalar.known(Payload.of(Buffers.direct("subscribed")), null).subscribe(s);
        };
    StreamListener listener = serve(answer);
    assertThat(listener).isInstanceOf(AnswerSink.class);
    assertThat(subscribed).hasValue(1);
    assertThat(fake.events).containsExactly("next subscribed");
  }
}
