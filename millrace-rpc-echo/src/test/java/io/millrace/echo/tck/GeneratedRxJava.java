package io.millrace.echo.tck;

import io.millrace.echo.v1.EchoServiceRxJava;
import io.millrace.rpc.ServerContext;
import io.netty.util.concurrent.EventExecutor;
import io.reactivex.rxjava3.core.Single;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import org.reactivestreams.Publisher;

/**
 * The generated RxJava flavour's private {@code SingleAnswer}, and a {@link ServerContext} for it,
 * reached by reflection so that the Reactive Streams TCK runs on exactly the code the plugin
 * writes.
 */
final class GeneratedRxJava {
  private static final Method ANSWER;
  private static final Constructor<ServerContext> CONTEXT;

  static {
    try {
      ANSWER =
          Class.forName(EchoServiceRxJava.class.getName() + "$SingleAnswer")
              .getDeclaredMethod("of", Single.class, ServerContext.class);
      ANSWER.setAccessible(true);
      CONTEXT =
          ServerContext.class.getDeclaredConstructor(
              io.millrace.rpc.MethodDescriptor.class,
              io.millrace.rpc.Headers.class,
              long.class,
              EventExecutor.class,
              int.class,
              java.net.SocketAddress.class,
              java.util.function.Supplier.class);
      CONTEXT.setAccessible(true);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private GeneratedRxJava() {}

  /** A call's context without a deadline on {@code loop} (-1: the header's "no timeout"). */
  static ServerContext context(EventExecutor loop) {
    try {
      return CONTEXT.newInstance(null, io.millrace.rpc.Headers.EMPTY, -1L, loop, 16, null, null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

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
