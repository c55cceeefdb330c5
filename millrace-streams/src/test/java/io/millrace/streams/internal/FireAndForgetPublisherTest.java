package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.Connection;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** The one-call fire-and-forget Publisher, against a connection that records what it is handed. */
class FireAndForgetPublisherTest {
  private final List<String> sent = new ArrayList<>();

  private final Connection connection =
      (Connection)
          Proxy.newProxyInstance(
              getClass().getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                if (method.getName().equals("fireAndForget") && args.length == 2) {
                  ByteBuf data = (ByteBuf) args[1];
                  sent.add(data.toString(StandardCharsets.UTF_8));
                  data.release();
                  return true;
                }
                throw new UnsupportedOperationException(method.getName());
              });

  /** Records the signals; requests {@code n} in onSubscribe. */
  private static final class Recording implements Subscriber<Void> {
    final long n;
    final List<String> signals = new ArrayList<>();
    Throwable error;

    Recording(long n) {
      this.n = n;
    }

    @Override
    public void onSubscribe(Subscription s) {
      signals.add("subscribe");
      s.request(n);
    }

    @Override
    public void onNext(Void v) {
      signals.add("next");
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error");
      error = t;
    }

    @Override
    public void onComplete() {
      signals.add("complete");
    }
  }

  @Test
  void sendsOnSubscribe_andCompletes() {
    Recording r = new Recording(1);
    FireAndForgetPublisher.fireAndForget(connection, Payload.of("hello")).subscribe(r);
    assertThat(sent).containsExactly("hello");
    assertThat(r.signals).containsExactly("subscribe", "complete");
  }

  @Test
  void anInvalidRequest_failsWithRule39_sendsNothing_andReleasesThePayload() {
    ByteBuf data = Unpooled.copiedBuffer("never", StandardCharsets.UTF_8);
    Recording r = new Recording(-7);
    FireAndForgetPublisher.fireAndForget(connection, Payload.of(data)).subscribe(r);
    assertThat(sent).isEmpty();
    assertThat(r.signals).containsExactly("subscribe", "error");
    assertThat(r.error)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("3.9")
        .hasMessageContaining("-7");
    assertThat(data.refCnt()).isZero();
  }

  @Test
  void aSecondSubscriber_isRefused() {
    var publisher = FireAndForgetPublisher.fireAndForget(connection, Payload.of("once"));
    publisher.subscribe(new Recording(1));
    Recording second = new Recording(1);
    publisher.subscribe(second);
    assertThat(sent).containsExactly("once");
    assertThat(second.signals).containsExactly("subscribe", "error");
    assertThat(second.error).hasMessageContaining("one subscriber");
  }
}
