package io.millrace.flavours;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.millrace.core.Connection;
import io.millrace.futures.BlockingRequester;
import io.millrace.futures.BlockingStream;
import io.millrace.futures.FutureHandler;
import io.millrace.futures.FutureResponder;
import io.millrace.observer.ObserverHandler;
import io.millrace.observer.ObserverResponder;
import io.millrace.observer.StreamObserver;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.millrace.transport.netty.MillraceClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/**
 * Blocking calls and blocking handlers on virtual threads (JDK 21+; the build runs this class on
 * the installed JDK 25 too): a thousand callers wait at once on a handful of carriers, handlers
 * block on a virtual-thread executor, StreamObserver producers wait in onNext for slow readers that
 * wait in a BlockingStream, and JFR's jdk.VirtualThreadPinned event shows that no wait pins a
 * carrier. Skipped on a JDK without virtual threads.
 */
class VirtualThreadsTest {

  private static ExecutorService virtualThreads() {
    assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21+");
    try {
      return (ExecutorService)
          Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }

  @Test
  void aThousandBlockingCallersOnVirtualThreadsNeverPinACarrier() throws Exception {
    ExecutorService callers = virtualThreads();
    ExecutorService handlers = virtualThreads();
    StreamsOptions onVirtualThreads = StreamsOptions.builder().handlerExecutor(handlers).build();
    List<RecordedEvent> pinned;
    try (Server streams = Server.millrace(ObserverResponder.of(flood(), onVirtualThreads));
        Server server =
            Server.millrace(
                FutureResponder.of(
                    new FutureHandler() {
                      @Override
                      public CompletionStage<Payload> requestResponse(Payload payload) {
                        sleep(20); // a blocking call (a database, say) on a virtual thread
                        return CompletableFuture.completedFuture(
                            Payload.of("done " + payload.dataUtf8()));
                      }
                    },
                    onVirtualThreads))) {
      MillraceClient client =
          MillraceClient.builder().config(Server.CONFIG).eventLoopThreads(1).build();
      try {
        Connection c = client.connect(Server.HOST, server.port()).get(10, TimeUnit.SECONDS);
        BlockingRequester r = BlockingRequester.of(c);
        BlockingRequester s =
            BlockingRequester.of(
                client.connect(Server.HOST, streams.port()).get(10, TimeUnit.SECONDS));
        // The first round loads and initialises classes, which pins (a JVM limit, not ours);
        // the second is the steady state that must not.
        callConcurrently(callers, r);
        readSlowly(callers, s);
        try (Recording jfr = new Recording()) {
          jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
          jfr.start();
          callConcurrently(callers, r);
          readSlowly(callers, s);
          jfr.stop();
          Path dump = Files.createTempFile("pinned", ".jfr");
          try {
            jfr.dump(dump);
            pinned = RecordingFile.readAllEvents(dump);
          } finally {
            Files.delete(dump);
          }
        }
      } finally {
        client.shutdownNow();
        client.awaitTermination(10, TimeUnit.SECONDS);
      }
    } finally {
      callers.shutdownNow();
      handlers.shutdownNow();
    }
    assertThat(pinned).as("virtual threads pinned to their carrier").isEmpty();
  }

  /** A thousand callers at once, each on its own virtual thread, each blocking for its answer. */
  private static void callConcurrently(ExecutorService callers, BlockingRequester r)
      throws Exception {
    List<Future<String>> answers = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      String n = Integer.toString(i);
      answers.add(callers.submit(() -> r.requestResponse(Payload.of(n)).dataUtf8()));
    }
    for (int i = 0; i < 1000; i++) {
      assertThat(answers.get(i).get(30, TimeUnit.SECONDS)).isEqualTo("done " + i);
    }
    // A stream read from a virtual thread: FutureHandler serves none, so the error arrives.
    Future<Boolean> read =
        callers.submit(
            () -> {
              try (BlockingStream s = r.requestStream(Payload.of("x"))) {
                return s.hasNext();
              }
            });
    assertThat(read).failsWithin(Duration.ofSeconds(10));
  }

  /**
   * A handler that sends 5000 values as fast as onNext returns: on a virtual thread it waits in
   * onNext whenever the reader is behind.
   */
  private static ObserverHandler flood() {
    return new ObserverHandler() {
      @Override
      public void requestStream(Payload payload, StreamObserver<Payload> responses) {
        for (int i = 0; i < 5000; i++) {
          responses.onNext(Payload.of(Integer.toString(i)));
        }
        responses.onCompleted();
      }
    };
  }

  /** Reads the flood on virtual threads, pausing, so that its producer waits again and again. */
  private static void readSlowly(ExecutorService readers, BlockingRequester r) throws Exception {
    List<Future<Integer>> counts = new ArrayList<>();
    for (int k = 0; k < 4; k++) {
      counts.add(
          readers.submit(
              () -> {
                int n = 0;
                try (BlockingStream s = r.requestStream(Payload.of("go"))) {
                  while (s.hasNext()) {
                    assertThat(s.next().dataUtf8()).isEqualTo(Integer.toString(n));
                    if (++n % 500 == 0) {
                      sleep(5);
                    }
                  }
                }
                return n;
              }));
    }
    for (Future<Integer> n : counts) {
      assertThat(n.get(30, TimeUnit.SECONDS)).isEqualTo(5000);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
