package io.millrace.bench.millrace;

import io.millrace.bench.Interaction;
import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.futures.BlockingRequester;
import io.millrace.futures.BlockingStream;
import io.millrace.futures.FutureHandler;
import io.millrace.futures.FutureRequester;
import io.millrace.futures.FutureResponder;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.LongAdder;

/**
 * Millrace's CompletableFuture and blocking flavour, used as a user of futures would: the handler
 * returns a completed future; the client attaches a callback to each request-response future, sends
 * fire-and-forget through the future call on the loop and the blocking call from a thread, and
 * reads a stream with a {@link BlockingStream} on its own thread. Futures serve no streams (the
 * flavour has no streaming handler), so the server's stream is the core responder's; the flavour
 * has no channel.
 */
public final class MillraceFuturesSystem extends FlavourSystem {

  @Override
  public String name() {
    return "millrace-futures";
  }

  @Override
  public boolean supports(Interaction interaction) {
    return interaction != Interaction.REQUEST_CHANNEL;
  }

  @Override
  Responder responder(ByteBuf response, LongAdder handled) {
    Responder futures =
        FutureResponder.of(
            new FutureHandler() {
              @Override
              public CompletionStage<Payload> requestResponse(Payload payload) {
                handled.increment();
                return CompletableFuture.completedFuture(Payload.of(response));
              }

              @Override
              public void fireAndForget(Payload payload) {
                handled.increment();
              }
            });
    Responder core = MillraceSystem.responder(response, handled);
    return new Responder() {
      @Override
      public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
        futures.fireAndForget(connection, metadata, data);
      }

      @Override
      public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
        return futures.requestResponse(stream, metadata, data);
      }

      @Override
      public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
        return core.requestStream(stream, metadata, data);
      }
    };
  }

  @Override
  Calls calls(Connection connection, ByteBuf payload) {
    FutureRequester futures = FutureRequester.of(connection);
    BlockingRequester blocking = BlockingRequester.of(connection);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        futures.requestResponse(Payload.of(payload)).thenRun(onResponse);
      }

      @Override
      void fireAndForget() {
        futures.fireAndForget(Payload.of(payload));
      }

      @Override
      void fireAndForgetFromThread() {
        blocking.fireAndForget(Payload.of(payload));
      }

      @Override
      void startStream(LongAdder received) {
        Thread t =
            new Thread(
                () -> {
                  try (BlockingStream s = blocking.requestStream(Payload.of(payload))) {
                    while (!Thread.currentThread().isInterrupted() && s.hasNext()) {
                      s.next();
                      received.increment();
                    }
                  } catch (RuntimeException e) {
                    // the connection closed at the end of the run
                  }
                },
                "bench-blocking-reader");
        t.setDaemon(true);
        onStop(t::interrupt);
        t.start();
      }

      @Override
      void startChannel(LongAdder received) {
        throw new UnsupportedOperationException("the futures flavour has no request-channel");
      }
    };
  }
}
