package io.millrace.echo.tck;

import io.millrace.rpc.ServerContext;
import io.netty.util.concurrent.EventExecutor;
import java.lang.reflect.Constructor;

/** A call's {@link ServerContext} for the generated answers (its constructor is the runtime's). */
final class Contexts {
  private static final Constructor<ServerContext> CONTEXT;

  static {
    try {
      CONTEXT =
          ServerContext.class.getDeclaredConstructor(
              Class.forName("io.millrace.rpc.ServerMethod"), // the runtime's, not public
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

  private Contexts() {}

  /** A call's context without a deadline on {@code loop} (-1: the header's "no timeout"). */
  static ServerContext on(EventExecutor loop) {
    try {
      return CONTEXT.newInstance(null, io.millrace.rpc.Headers.EMPTY, -1L, loop, 16, null, null);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }
}
