package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.streams.Payload;
import io.millrace.testing.SignalRecorder;
import io.netty.buffer.ByteBuf;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;

/** What {@link Relay} does after its subscriber made an invalid request (rule 3.9). */
class RelayTest {

  @Test
  void anInvalidRequest_failsTheSubscriber_cancelsTheSource_andReleasesWhatComesAfter() {
    SignalRecorder<Payload> subscriber = new SignalRecorder<>(0);
    Relay<Payload> relay = new Relay<>(subscriber) {};
    boolean[] cancelled = new boolean[1];
    relay.onSubscribe(
        new Subscription() {
          @Override
          public void request(long n) {}

          @Override
          public void cancel() {
            cancelled[0] = true;
          }
        });
    subscriber.subscription.request(0);
    assertThat(cancelled[0]).isTrue();
    assertThat(subscriber.signals).hasSize(1).first().asString().startsWith("error request-n");

    ByteBuf late = Buffers.direct("emitted all the same"); // a source that emits after the cancel
    relay.onNext(Payload.of(late));
    relay.onComplete();
    assertThat(late.refCnt()).isZero();
    assertThat(subscriber.signals).hasSize(1); // nothing more relayed
  }
}
