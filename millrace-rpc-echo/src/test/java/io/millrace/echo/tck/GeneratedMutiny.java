package io.millrace.echo.tck;

import io.millrace.echo.v1.EchoServiceMutiny;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.UniSubscriber;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;

/**
 * The generated Mutiny flavour's private nested classes, reached by reflection so that the Reactive
 * Streams TCK runs on exactly the code the plugin writes.
 */
final class GeneratedMutiny {
  private static final Method ANSWER;
  private static final Constructor<?> CALL_SUBSCRIBER;

  static {
    try {
      ANSWER =
          nested("UniAnswer")
              .getDeclaredMethod("of", Uni.class, io.millrace.rpc.ServerContext.class);
      ANSWER.setAccessible(true);
      CALL_SUBSCRIBER = nested("CallSubscriber").getDeclaredConstructor(UniSubscriber.class);
      CALL_SUBSCRIBER.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private GeneratedMutiny() {}

  private static Class<?> nested(String name) throws ClassNotFoundException {
    return Class.forName(EchoServiceMutiny.class.getName() + "$" + name);
  }

  /**
   * {@code UniAnswer.of(answer, null)}: a handler's Uni as the Publisher the runtime subscribes to,
   * the Uni subscribed when the runtime subscribes.
   */
  @SuppressWarnings("unchecked")
  static <T> Publisher<T> answer(Uni<T> answer) {
    try {
      return (Publisher<T>) ANSWER.invoke(null, answer, null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * {@code UniAnswer.of(answer, context)}: as a unary method's binding makes it, subscribed at once
   * when {@code context} allows it.
   */
  @SuppressWarnings("unchecked")
  static <T> Publisher<T> answer(Uni<T> answer, io.millrace.rpc.ServerContext context) {
    try {
      return (Publisher<T>) ANSWER.invoke(null, answer, context);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A Uni that fails a millisecond later, on Mutiny's timer thread. */
  static Uni<Long> failingLater() {
    return Uni.createFrom()
        .item(7L)
        .onItem()
        .delayIt()
        .by(java.time.Duration.ofMillis(1))
        .onItem()
        .failWith(x -> new IllegalStateException("failed on purpose"));
  }

  /** {@code new CallSubscriber<>(downstream)}: a call's Subscriber, relaying to a Uni's. */
  @SuppressWarnings("unchecked")
  static <T> Subscriber<T> callSubscriber(UniSubscriber<? super T> downstream) {
    try {
      return (Subscriber<T>) CALL_SUBSCRIBER.newInstance(downstream);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
