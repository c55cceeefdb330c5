package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/** {@link PrefixedPublisher} without sockets: what a cancel and a failing parse leave behind. */
class PrefixedPublisherTest {

  /** A source that keeps its subscriber, for the test to signal, and records a cancel. */
  private static final class Source implements Publisher<Payload>, Subscription {
    final AtomicReference<Subscriber<? super Payload>> subscriber = new AtomicReference<>();
    final AtomicBoolean cancelled = new AtomicBoolean();

    @Override
    public void subscribe(Subscriber<? super Payload> s) {
      subscriber.set(s);
      s.onSubscribe(this);
    }

    @Override
    public void request(long n) {}

    @Override
    public void cancel() {
      cancelled.set(true);
    }
  }

  /** Records what reaches the downstream; asks for {@code n} at once and keeps the subscription. */
  private static final class Recorder implements Subscriber<String> {
    final List<String> signals = new CopyOnWriteArrayList<>();
    Subscription subscription;

    @Override
    public void onSubscribe(Subscription s) {
      subscription = s;
    }

    @Override
    public void onNext(String item) {
      signals.add(item);
    }

    @Override
    public void onError(Throwable t) {
      signals.add("error " + t.getMessage());
    }

    @Override
    public void onComplete() {
      signals.add("complete");
    }
  }

  private static Payload pooled(String text) {
    ByteBuf data = PooledByteBufAllocator.DEFAULT.buffer();
    data.writeCharSequence(text, java.nio.charset.StandardCharsets.UTF_8);
    return Payload.of(data);
  }

  private static String utf8(ByteBuf b) {
    return b.toString(java.nio.charset.StandardCharsets.UTF_8);
  }

  @Test
  void afterACancel_aPayloadStillOnItsWayIsReleased_andNothingMoreIsSignalled() {
    Source source = new Source();
    PrefixedPublisher<Payload, String> p =
        PrefixedPublisher.parsing(() -> "first", source, PrefixedPublisherTest::utf8);
    Recorder down = new Recorder();
    p.subscribe(down);
    down.subscription.request(2);
    Payload a = pooled("a");
    source.subscriber.get().onNext(a);
    down.subscription.cancel();
    assertThat(source.cancelled).isTrue();
    Payload late = pooled("late");
    source.subscriber.get().onNext(late);
    source.subscriber.get().onComplete();
    assertThat(down.signals).containsExactly("first", "a");
    assertThat(a.data().refCnt()).as("read and released").isZero();
    assertThat(late.data().refCnt()).as("dropped and released").isZero();
  }

  @Test
  void aMessageThatDoesNotParse_failsTheStreamOnce_andCancelsTheSource() {
    Source source = new Source();
    PrefixedPublisher<Payload, String> p =
        PrefixedPublisher.parsing(
            null,
            source,
            b -> {
              throw Status.of(Status.Code.INVALID_ARGUMENT)
                  .withMessage("not a message")
                  .asException();
            });
    Recorder down = new Recorder();
    p.subscribe(down);
    down.subscription.request(5);
    Payload bad = pooled("bad");
    source.subscriber.get().onNext(bad);
    source.subscriber.get().onError(new IllegalStateException("the source's own end, later"));
    assertThat(source.cancelled).isTrue();
    assertThat(bad.data().refCnt()).isZero();
    assertThat(down.signals).hasSize(1);
    assertThat(down.signals.get(0)).startsWith("error ").contains("not a message");
  }
}
