package io.millrace.rpc;

import io.millrace.core.PayloadEncoder;
import io.millrace.streams.Payload;
import io.millrace.streams.internal.ReadsBuffersInPlace;
import io.millrace.streams.internal.ReadsInPlace;
import io.millrace.streams.internal.SerialSubscription;
import io.millrace.streams.internal.TakesEncoded;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Emits an optional first item, then {@code source}'s items through {@code mapper}: the caller's
 * messages behind a channel's call header (client), or a routing caller's first message before the
 * rest of its channel (server).
 *
 * <p>The first item is made and sent on the first request, before {@code source} is subscribed, so
 * it never races the source's items and is never made for a call cancelled before it asked. A
 * mapper that throws cancels the source and fails the subscriber with the status the exception
 * stands for. {@code dropped} releases a source item that arrives after the end.
 *
 * <p>It {@link ReadsInPlace}: {@code mapper} must have read a source payload in full when it
 * returns (parsing it), and {@code dropped} must not keep one. Over a source of payloads from the
 * streams layer, {@code dataMapper} (when given) reads the data of those it lends in place, with no
 * payload made for them ({@link ReadsBuffersInPlace}).
 *
 * <p>Messages to the streams layer ({@link #encoding}): a message small enough to be written
 * straight into its frame goes to a subscriber that {@link TakesEncoded} as its parts, with no
 * payload made for it.
 */
final class PrefixedPublisher<T, R>
    implements Publisher<R>, Subscriber<T>, Subscription, ReadsBuffersInPlace {
  private final Supplier<R> first;
  private final Publisher<T> source;
  private final Function<T, R> mapper;
  private final Consumer<T> dropped;
  private final Function<ByteBuf, R> dataMapper;
  private final PayloadEncoder<T> encoder; // non-null: R is Payload, see encoding()
  private final Function<T, R> serialize; // with encoder: a message too long for the frame
  private TakesEncoded takesEncoded; // the downstream, when encoder is set and it takes parts

  private final SerialSubscription upstream = new SerialSubscription();
  private Subscriber<? super R> downstream;
  private boolean started; // touched by request and cancel, which the subscriber calls serially

  /** 1 once the stream has ended (a terminal signal claimed it, or a cancel, or close). */
  private volatile int done;

  private static final AtomicIntegerFieldUpdater<PrefixedPublisher<?, ?>> DONE = newDoneUpdater();

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static AtomicIntegerFieldUpdater<PrefixedPublisher<?, ?>> newDoneUpdater() {
    return (AtomicIntegerFieldUpdater)
        AtomicIntegerFieldUpdater.newUpdater(PrefixedPublisher.class, "done");
  }

  /** Claims the end: true for the one caller that may signal it (rule 1.7: one terminal). */
  private boolean claimEnd() {
    return done == 0 && DONE.compareAndSet(this, 0, 1);
  }

  /** {@code first} null: no first item. */
  PrefixedPublisher(
      Supplier<R> first, Publisher<T> source, Function<T, R> mapper, Consumer<T> dropped) {
    this(first, source, mapper, dropped, null, null, null);
  }

  /**
   * Over the streams layer's payloads: each payload's data through {@code parse}, read in place
   * when lent, else from the payload, which is then released (as one that arrives after the end
   * is).
   */
  static <R> PrefixedPublisher<Payload, R> parsing(
      Supplier<R> first, Publisher<Payload> source, Function<ByteBuf, R> parse) {
    return new PrefixedPublisher<>(
        first,
        source,
        p -> {
          try {
            return parse.apply(p.data());
          } finally {
            p.release();
          }
        },
        Payload::release,
        parse,
        null,
        null);
  }

  /**
   * Over a caller's messages, without metadata: written by the marshaller's encoder straight into
   * the frame when {@link ResponsePublisher#encodesInFrame}, else serialized into a buffer first.
   */
  static <T> PrefixedPublisher<T, Payload> encoding(
      Supplier<Payload> first,
      Publisher<T> source,
      Marshaller<T> marshaller,
      ByteBufAllocator alloc) {
    return new PrefixedPublisher<>(
        first,
        source,
        r -> ResponsePublisher.message(marshaller, r, alloc),
        unused -> {},
        null,
        marshaller.encoder(),
        r -> Payload.of(marshaller.serialize(r, alloc)));
  }

  /**
   * {@code dataMapper}: {@code mapper} for a payload's data alone, used for the payloads the source
   * lends (a source of payloads only; null: they go through {@code mapper}). {@code encoder} and
   * {@code serialize}: see {@link #encoding} (null: none).
   */
  private PrefixedPublisher(
      Supplier<R> first,
      Publisher<T> source,
      Function<T, R> mapper,
      Consumer<T> dropped,
      Function<ByteBuf, R> dataMapper,
      PayloadEncoder<T> encoder,
      Function<T, R> serialize) {
    this.first = first;
    this.source = source;
    this.mapper = mapper;
    this.dropped = dropped;
    this.dataMapper = dataMapper;
    this.encoder = encoder;
    this.serialize = serialize;
  }

  @Override
  public void subscribe(Subscriber<? super R> subscriber) {
    if (downstream != null) {
      Publishers.refuseSecond(subscriber, "stream has");
      return;
    }
    downstream = subscriber;
    takesEncoded = encoder != null && subscriber instanceof TakesEncoded t ? t : null;
    subscriber.onSubscribe(this);
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      Subscriber<? super R> d = downstream;
      boolean claimed = claimEnd();
      cancel();
      if (claimed) {
        d.onError(new IllegalArgumentException("request-n must be positive (rule 3.9): " + n));
      }
      return;
    }
    if (started) {
      upstream.request(n);
      return;
    }
    started = true;
    long rest = n;
    if (first != null) {
      R item = first.get();
      if (item != null) {
        if (n != Long.MAX_VALUE) {
          rest--; // the first item takes one unit of this demand
        }
        downstream.onNext(item);
      }
    }
    if (rest > 0) {
      upstream.request(rest);
    }
    source.subscribe(this);
  }

  @Override
  public void cancel() {
    started = true;
    done = 1; // a source item still on its way is dropped
    takesEncoded = null;
    downstream = Publishers.CANCELLED; // rule 3.13
    upstream.cancel();
  }

  /** Ends the stream from this side (the call is over): the source is cancelled. Any thread. */
  void close() {
    done = 1;
    upstream.cancel();
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream.set(java.util.Objects.requireNonNull(s, "subscription (rule 2.13)"));
  }

  @Override
  public void onNext(T item) {
    if (item == null) { // the stream fails, and the source is told (rule 2.13)
      NullPointerException e = new NullPointerException("a null message (rule 2.13)");
      fail(e);
      throw e;
    }
    if (done != 0) {
      dropped.accept(item);
      return;
    }
    TakesEncoded direct = takesEncoded;
    if (direct != null) {
      boolean inFrame;
      try {
        inFrame = ResponsePublisher.encodesInFrame(encoder, item);
      } catch (RuntimeException e) {
        fail(e);
        return;
      }
      if (inFrame) {
        direct.onNextEncoded(null, item, encoder);
      } else {
        emitMapped(serialize, item);
      }
      return;
    }
    emitMapped(mapper, item);
  }

  /**
   * Only the streams layer calls this, and only as the subscriber of its own Publisher of payloads:
   * {@code T} is then {@link Payload}.
   */
  @Override
  @SuppressWarnings("unchecked")
  public void onNextInPlace(ByteBuf metadata, ByteBuf data) {
    if (dataMapper == null) {
      onNext((T) Payload.lent(metadata, data));
      return;
    }
    if (done != 0) {
      return; // lent: nothing to release
    }
    emitMapped(dataMapper, data);
  }

  /** Emits what {@code f} makes of {@code item}; a failure of {@code f} ends the stream. */
  private <X> void emitMapped(Function<? super X, R> f, X item) {
    R mapped;
    try {
      mapped = f.apply(item);
    } catch (RuntimeException e) {
      fail(e);
      return;
    }
    downstream.onNext(mapped);
  }

  /** A mapping failed: the source is cancelled, the subscriber told the status it stands for. */
  private void fail(RuntimeException e) {
    boolean claimed = claimEnd();
    upstream.cancel();
    if (claimed) {
      downstream.onError(Status.fromThrowable(e).asException());
    }
  }

  @Override
  public void onError(Throwable t) {
    if (t == null) {
      NullPointerException e = new NullPointerException("onError(null) (rule 2.13)");
      onError(e);
      throw e;
    }
    if (claimEnd()) {
      downstream.onError(t);
    }
  }

  @Override
  public void onComplete() {
    if (claimEnd()) {
      downstream.onComplete();
    }
  }
}
