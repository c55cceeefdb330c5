package io.millrace.echo.tck;

import io.millrace.echo.v1.EchoServiceRxJava;
import io.millrace.rpc.ServerContext;
import io.reactivex.rxjava3.core.Single;
import java.lang.reflect.Method;
import org.reactivestreams.Publisher;

/**
 * The generated RxJava flavour's private {@code SingleAnswer}, reached by reflection so that the
 * Reactive Streams TCK runs on exactly the code the plugin writes.
 */
final class GeneratedRxJava {
  private static final Method ANSWER;

  static {
    try {
      ANSWER =
          Class.forName(EchoServiceRxJava.class.getName() + "$SingleAnswer")
              .getDeclaredMethod("of", Single.class, ServerContext.class);
      ANSWER.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private GeneratedRxJava() {}

  /** {@code SingleAnswer.of(single, context)}. */
  @SuppressWarnings("unchecked")
  static <T> Publisher<T> answer(Single<T> single, ServerContext context) {
    try {
      return (Publisher<T>) ANSWER.invoke(null, single, context);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
