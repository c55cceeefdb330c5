package io.millrace.reactor.internal;

import io.millrace.streams.internal.Relay;
import io.millrace.streams.internal.Scalar;
import java.util.concurrent.Callable;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import reactor.core.CorePublisher;
import reactor.core.CoreSubscriber;
import reactor.core.Exceptions;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * A Mono or Flux whose subscribers are relayed as Reactor {@link CoreSubscriber}s.
 *
 * <p>Why. Reactor wraps every subscriber that is not a {@code CoreSubscriber} in a {@code
 * StrictSubscriber}, which serialises each signal with atomic updates and defers requests made
 * inside {@code onSubscribe}: a cost on every item of a stream. Millrace's subscribers need neither
 * guard (see {@link Relay}). The relay subscribes through {@link Publisher#subscribe}, so the
 * Publisher's assembly hooks still apply. A source known at once may be called instead of
 * subscribed ({@link #of}), as Reactor's own operators call such sources.
 */
public class DirectAnswer<T> implements Publisher<T> {
  final Publisher<T> source;

  /** What the relay gives as its Context: empty, or a requester channel's subscriber's. */
  private final Context context;

  private DirectAnswer(Publisher<T> source, Context context) {
    this.source = source;
    this.context = context;
  }

  /**
   * {@code source} (null stays null), relaying to each subscriber as a CoreSubscriber. A source
   * whose outcome can be had by a call ({@code Mono.just}, {@code Mono.fromCallable} and the like:
   * {@link Scalar}) stays callable through the relay, so that the responder can take a
   * request-response's answer without subscribing; not while an {@code onLastOperator} hook would
   * wrap it at subscription, which the call would skip (to tell, the hooks run here once more for
   * such a source, and what they make is dropped).
   */
  public static <T> Publisher<T> of(Publisher<T> source) {
    if (source == null) {
      return null;
    }
    Publisher<T> known = known(source);
    return known != null ? known : new DirectAnswer<>(source, Context.empty());
  }

  /**
   * {@code source} relayed to each subscriber as a CoreSubscriber whose Context is {@code context}:
   * a requester channel's payloads see the Context of the channel's subscriber, as an inner
   * Publisher of Reactor's own operators does (a discard hook set there with {@code doOnDiscard}
   * included).
   */
  public static <T> Publisher<T> of(Publisher<T> source, ContextView context) {
    return new DirectAnswer<>(source, Context.of(context));
  }

  /**
   * {@code source} as a relay that stays callable ({@link #of}), or null when it is not known at
   * once or an {@code onLastOperator} hook would wrap it.
   */
  static <T> Publisher<T> known(Publisher<T> source) {
    return callable(source) ? new Known<>(source) : null;
  }

  /**
   * Whether {@code source}'s outcome may be had by a call instead of a subscription: it is a {@link
   * Callable} and no {@code onLastOperator} hook would wrap it at subscription.
   */
  static boolean callable(Publisher<?> source) {
    // No hook: the source itself (the hooks run once more to tell; what they make is dropped).
    // Reactor's own kinds by their classes, not as CorePublisher: checked against Callable here
    // and in call(), and against CorePublisher in between, an answer's class (Mono.just's, say)
    // would evict one interface from the JVM's one-entry cache for the other on every call before
    // JDK 23 (JDK-8180450), a search of its interfaces each time.
    CorePublisher<?> core =
        source instanceof Mono<?> mono ? mono : source instanceof Flux<?> flux ? flux : null;
    return core != null && source instanceof Callable && Operators.onLastAssembly(core) == core;
  }

  /**
   * {@code source}'s outcome taken now by a call ({@link #callable} said it may be), as a {@link
   * Scalar} of it: one that the layer calls, or whose subscription, ending without signalling it,
   * releases the payload. A VirtualMachineError is thrown here.
   */
  static <T> Publisher<T> taken(Publisher<T> source) {
    try {
      return Scalar.known(call(source), null);
    } catch (VirtualMachineError e) {
      throw e;
    } catch (Throwable t) {
      return Scalar.known(null, t);
    }
  }

  /**
   * A callable source's outcome. An error that is not an Exception comes out as itself, as a
   * subscription signals it, not in the wrapper Reactor's {@code Mono.error} throws it in.
   */
  @SuppressWarnings("unchecked")
  private static <T> T call(Publisher<T> source) throws Exception {
    try {
      return ((Callable<T>) source).call();
    } catch (Exception e) {
      // Only the wrapper Mono.error puts around a non-Exception: a subscription signals any
      // other exception as it is, a wrapped one included.
      Throwable t = Exceptions.unwrap(e);
      throw t == e || t instanceof Exception ? e : Scalar.<RuntimeException>rethrown(t);
    }
  }

  @Override
  public void subscribe(Subscriber<? super T> subscriber) {
    source.subscribe(new CoreRelay<>(subscriber, context));
  }

  /** A relay of a source that is also a {@link Callable}: calling it calls the source. */
  private static final class Known<T> extends DirectAnswer<T> implements Callable<T> {
    Known(Publisher<T> source) {
      super(source, Context.empty());
    }

    /** The source's outcome ({@link DirectAnswer#call}). */
    @Override
    public T call() throws Exception {
      return DirectAnswer.call(source);
    }
  }

  private static final class CoreRelay<T> extends Relay<T> implements CoreSubscriber<T> {
    private final Context context;

    CoreRelay(Subscriber<? super T> actual, Context context) {
      super(actual);
      this.context = context;
    }

    @Override
    public Context currentContext() {
      return context;
    }
  }
}
