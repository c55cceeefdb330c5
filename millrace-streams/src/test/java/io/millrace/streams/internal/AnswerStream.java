package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A request-response stream on the responder's side, without an engine, that records what is sent
 * on it ({@code next <data>}, {@code complete}, {@code fail <error's class>}) and on which thread;
 * its connection's loop is the test's.
 */
final class AnswerStream {
  private final EventExecutor loop;

  AnswerStream(EventExecutor loop) {
    this.loop = loop;
  }

  final List<String> events = new CopyOnWriteArrayList<>();
  final List<String> threads = new CopyOnWriteArrayList<>();
  volatile boolean ready = true;
  volatile boolean done;

  final Connection connection =
      (Connection)
          Proxy.newProxyInstance(
              Connection.class.getClassLoader(),
              new Class<?>[] {Connection.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "executor" -> {
                    return AnswerStream.this.loop; // (read when asked: set by then)
                  }
                  case "toString" -> {
                    return "connection";
                  }
                  default -> throw new UnsupportedOperationException(method.getName());
                }
              });

  final Stream stream =
      (Stream)
          Proxy.newProxyInstance(
              Stream.class.getClassLoader(),
              new Class<?>[] {Stream.class},
              (proxy, method, args) -> {
                switch (method.getName()) {
                  case "connection" -> {
                    return connection;
                  }
                  case "isReady" -> {
                    return ready && !done;
                  }
                  case "isOutboundDone" -> {
                    return done;
                  }
                  case "streamId" -> {
                    return 1;
                  }
                  case "next" -> {
                    ByteBuf metadata = (ByteBuf) args[0];
                    ByteBuf data = (ByteBuf) args[1];
                    record("next " + data.toString(StandardCharsets.UTF_8));
                    data.release();
                    if (metadata != null) {
                      metadata.release();
                    }
                    done = true;
                    return null;
                  }
                  case "complete" -> {
                    record("complete");
                    done = true;
                    return null;
                  }
                  case "fail" -> {
                    record("fail " + ((Throwable) args[0]).getClass().getSimpleName());
                    done = true;
                    return null;
                  }
                  case "toString" -> {
                    return "stream";
                  }
                  default -> throw new UnsupportedOperationException(method.getName());
                }
              });

  private void record(String event) {
    events.add(event);
    threads.add(Thread.currentThread().getName());
  }
}
