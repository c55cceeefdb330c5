package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceFutures;
import io.millrace.rpc.MessageIterator;
import io.millrace.rpc.ResponseSink;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServerContext;
import io.millrace.rpc.Status;
import io.millrace.rpc.StatusException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The CompletableFuture and blocking flavour the plugin generates, both sides, over TCP. */
class FuturesFlavourTest {
  private final ExecutorService handlers = Executors.newCachedThreadPool();
  private final CountDownLatch countCancelled = new CountDownLatch(1);
  private final AtomicLong sentBeforeCancel = new AtomicLong();
  private final AtomicLong notified = new AtomicLong();
  private final java.util.concurrent.LinkedBlockingQueue<Status.Code> collectWokeWith =
      new java.util.concurrent.LinkedBlockingQueue<>();
  private RpcOverTcp tcp;
  private EchoServiceFutures.Client echo;

  /** EchoService written as blocking methods. */
  private final EchoServiceFutures.Service blockingEcho =
      new EchoServiceFutures.Service() {
        @Override
        public EchoReply echo(EchoRequest request, ServerContext context) {
          if (request.getFailWithStatus() != 0) {
            throw Status.of(Status.Code.of(request.getFailWithStatus()))
                .withMessage(request.getFailMessage())
                .asException();
          }
          return EchoReply.newBuilder().setPayload(request.getPayload()).build();
        }

        @Override
        public void count(
            CountRequest request, ServerContext context, ResponseSink<EchoReply> responses) {
          try {
            for (int i = 0; i < request.getN(); i++) {
              responses.send(EchoReply.newBuilder().setSequence(i).build());
              sentBeforeCancel.incrementAndGet();
            }
          } catch (StatusException e) {
            countCancelled.countDown();
            throw e;
          }
        }

        @Override
        public EchoReply collect(MessageIterator<EchoRequest> requests, ServerContext context) {
          ByteString all = ByteString.EMPTY;
          long n = 0;
          try {
            while (requests.hasNext()) {
              all = all.concat(requests.next().getPayload());
              n++;
            }
          } catch (StatusException e) {
            collectWokeWith.add(e.status().code());
            throw e;
          }
          return EchoReply.newBuilder().setPayload(all).setSequence(n).build();
        }

        @Override
        public void chat(
            MessageIterator<EchoRequest> requests,
            ServerContext context,
            ResponseSink<EchoReply> responses) {
          long i = 0;
          while (requests.hasNext()) {
            responses.send(
                EchoReply.newBuilder()
                    .setPayload(requests.next().getPayload())
                    .setSequence(i++)
                    .build());
          }
        }

        @Override
        public void notify(EchoRequest request, ServerContext context) {
          notified.incrementAndGet();
        }
      };

  @BeforeEach
  void start() throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceFutures.bind(blockingEcho, handlers)).build());
    echo = new EchoServiceFutures.Client(tcp.client());
  }

  @AfterEach
  void stop() {
    tcp.close();
    handlers.shutdownNow();
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void unary_blockingAndAsync() throws Exception {
    assertThat(echo.echo(request("hi")).getPayload().toStringUtf8()).isEqualTo("hi");
    assertThat(
            echo.echoAsync(request("later")).get(10, TimeUnit.SECONDS).getPayload().toStringUtf8())
        .isEqualTo("later");
    assertThatThrownBy(
            () ->
                echo.echo(
                    EchoRequest.newBuilder().setFailWithStatus(6).setFailMessage("dup").build()))
        .isInstanceOfSatisfying(
            StatusException.class,
            e -> {
              assertThat(e.status().code()).isEqualTo(Status.Code.ALREADY_EXISTS);
              assertThat(e.status().message()).isEqualTo("dup");
            });
  }

  @Test
  void serverStreaming_readsByBlocking_andClosingStopsTheSender() throws Exception {
    List<Long> first = new ArrayList<>();
    try (MessageIterator<EchoReply> replies =
        echo.count(CountRequest.newBuilder().setN(1_000_000).build())) {
      for (int i = 0; i < 5 && replies.hasNext(); i++) {
        first.add(replies.next().getSequence());
      }
    }
    assertThat(first).containsExactly(0L, 1L, 2L, 3L, 4L);
    assertThat(countCancelled.await(10, TimeUnit.SECONDS))
        .as("the handler's send threw CANCELLED")
        .isTrue();
    assertThat(sentBeforeCancel.get())
        .as("the handler was held back by demand, not allowed to run ahead")
        .isLessThan(10_000);
  }

  @Test
  void clientStreaming_andBidi_fromIterables() {
    EchoReply all = echo.collect(List.of(request("a"), request("b"), request("c")));
    assertThat(all.getPayload().toStringUtf8()).isEqualTo("abc");
    assertThat(all.getSequence()).isEqualTo(3);
    List<String> chat = new ArrayList<>();
    try (MessageIterator<EchoReply> replies = echo.chat(List.of(request("x"), request("y")))) {
      replies.forEachRemaining(r -> chat.add(r.getSequence() + r.getPayload().toStringUtf8()));
    }
    assertThat(chat).containsExactly("0x", "1y");
  }

  @Test
  void fireAndForget_reachesTheHandler() throws Exception {
    echo.notify(request("n"));
    echo.notifyAsync(request("n")).get(10, TimeUnit.SECONDS);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (notified.get() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    assertThat(notified.get()).isEqualTo(2);
  }

  /**
   * One request, then an Iterable that blocks until the test ends: a source that never finishes.
   */
  private static Iterable<EchoRequest> oneThenNothing(CountDownLatch end) {
    return () ->
        new java.util.Iterator<>() {
          private boolean first = true;

          @Override
          public boolean hasNext() {
            if (first) {
              return true;
            }
            try {
              end.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
            return false;
          }

          @Override
          public EchoRequest next() {
            first = false;
            return request("one");
          }
        };
  }

  @Test
  void aDeadline_wakesAHandlerWaitingForRequests_andTheBlockingSourceIsNotReadOnTheLoop() {
    CountDownLatch end = new CountDownLatch(1);
    try {
      // A handler still waiting for a thread at its deadline is not run at all: a thread ready,
      // and a deadline that leaves a loaded machine time to start the handler.
      handlers.submit(() -> {}).get(10, TimeUnit.SECONDS);
      // The Iterable blocks after one request; were it read on the event loop, the loop (and the
      // deadline timer on it) would stall and this call would never end.
      assertThatThrownBy(
              () ->
                  echo.collect(
                      oneThenNothing(end),
                      io.millrace.rpc.CallOptions.DEFAULT.withTimeout(
                          java.time.Duration.ofMillis(1_000))))
          .isInstanceOfSatisfying(
              StatusException.class,
              e -> assertThat(e.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED));
      Status.Code woke = collectWokeWith.poll(10, TimeUnit.SECONDS);
      assertThat(woke)
          .as("the handler parked in hasNext() woke with the call's end")
          .isIn(Status.Code.DEADLINE_EXCEEDED, Status.Code.CANCELLED);
    } catch (InterruptedException
        | java.util.concurrent.ExecutionException
        | java.util.concurrent.TimeoutException e) {
      throw new AssertionError(e);
    } finally {
      end.countDown();
    }
  }

  @Test
  void closingAnIteratorFromAnotherThread_wakesItsReader() throws Exception {
    CountDownLatch end = new CountDownLatch(1);
    try {
      MessageIterator<EchoReply> replies = echo.chat(oneThenNothing(end));
      assertThat(replies.next().getPayload().toStringUtf8()).isEqualTo("one");
      java.util.concurrent.CompletableFuture<Boolean> more =
          java.util.concurrent.CompletableFuture.supplyAsync(replies::hasNext);
      Thread.sleep(200);
      assertThat(more).isNotDone();
      replies.close();
      assertThat(more.get(10, TimeUnit.SECONDS)).isFalse();
    } finally {
      end.countDown();
    }
  }
}
