package io.millrace.rpc;

import java.util.function.Consumer;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * Emits an optional first item, then {@code source}'s items through {@code mapper}: the caller's
 * messages behind a channel's call header (client), or a routing caller's first message before the
 * rest of its channel (server).
 *
 * <p>The first item goes out on the first request, before {@code source} is subscribed, so it never
 * races the source's items. A mapper that throws cancels the source and fails the subscriber with
 * the status the exception stands for. {@code discard} releases a first item that is never sent.
 */
final class PrefixedPublisher<T, R> implements Publisher<R>, Subscriber<T>, Subscription {
  private final R first;
  private final Publisher<T> source;
  private final Function<T, R> mapper;
  private final Consumer<R> discard;

  private final DeferredSubscription upstream = new DeferredSubscription();
  private Subscriber<? super R> downstream;
  private boolean started; // touched by request and cancel, which the subscriber calls serially
  private volatile boolean done;

  PrefixedPublisher(R first, Publisher<T> source, Function<T, R> mapper, Consumer<R> discard) {
    this.first = first;
    this.source = source;
    this.mapper = mapper;
    this.discard = discard;
  }

  @Override
  public void subscribe(Subscriber<? super R> subscriber) {
    if (downstream != null) {
      throw new IllegalStateException("one subscriber");
    }
    downstream = subscriber;
    subscriber.onSubscribe(this);
  }

  @Override
  public void request(long n) {
    if (n <= 0) {
      cancel();
      downstream.onError(new IllegalArgumentException("request-n must be positive: " + n));
      return;
    }
    if (started) {
      upstream.request(n);
      return;
    }
    started = true;
    long rest = n;
    if (first != null) {
      rest--; // the first item takes one unit of this demand
      downstream.onNext(first);
    }
    if (rest > 0) {
      upstream.request(rest);
    }
    source.subscribe(this);
  }

  @Override
  public void cancel() {
    if (!started && first != null) {
      discard.accept(first);
    }
    started = true;
    upstream.cancel();
  }

  @Override
  public void onSubscribe(Subscription s) {
    upstream.set(s);
  }

  @Override
  public void onNext(T item) {
    if (done) {
      return;
    }
    R mapped;
    try {
      mapped = mapper.apply(item);
    } catch (RuntimeException e) {
      done = true;
      upstream.cancel();
      downstream.onError(Status.fromThrowable(e).asException());
      return;
    }
    downstream.onNext(mapped);
  }

  @Override
  public void onError(Throwable t) {
    if (!done) {
      done = true;
      downstream.onError(t);
    }
  }

  @Override
  public void onComplete() {
    if (!done) {
      done = true;
      downstream.onComplete();
    }
  }
}
