package io.millrace.rpc;

import static io.millrace.rpc.TestService.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.streams.StreamsOptions;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * Calls whose handlers wait for a thread on the server's handler executor (an overloaded server):
 * the wait counts against their deadline, and a call cancelled while it waits is not run.
 */
class QueuedHandlersTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private final Gate gate = new Gate();
  private final AtomicInteger handled = new AtomicInteger();
  private final AtomicReference<Duration> remaining = new AtomicReference<>();
  private RpcOverTcp tcp;
  private RpcClient rpc;

  @BeforeEach
  void start() throws Exception {
    ServiceDefinition service =
        ServiceDefinition.builder(TestService.NAME)
            .method(
                TestService.ECHO,
                (StringValue request, ServerContext ctx) -> {
                  handled.incrementAndGet();
                  remaining.set(ctx.hasDeadline() ? ctx.timeRemaining() : null);
                  return Mono.just(request);
                })
            .build();
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder()
                .service(service)
                .streamsOptions(StreamsOptions.builder().handlerExecutor(gate).build())
                .build());
    rpc = tcp.client();
  }

  @AfterEach
  void stop() {
    gate.open();
    tcp.close();
  }

  @Test
  void aCallPastItsDeadlineWhileItWaited_isNotRun() throws Exception {
    CallOptions deadline = CallOptions.DEFAULT.withTimeout(Duration.ofMillis(100));
    Throwable t =
        Mono.from(rpc.unary(TestService.ECHO, text("late"), deadline))
            .materialize()
            .block(WAIT)
            .getThrowable();
    assertThat(((StatusException) t).status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    gate.awaitQueued(1);
    Thread.sleep(200);
    gate.open();
    assertThat(ranAfterTheGate()).isEqualTo(0);
  }

  @Test
  void aCallCancelledWhileItWaited_isNotRun() throws Exception {
    Disposable call =
        Mono.from(rpc.unary(TestService.ECHO, text("x"), CallOptions.DEFAULT)).subscribe();
    gate.awaitQueued(1);
    call.dispose(); // CANCEL
    Thread.sleep(200); // for the CANCEL to arrive
    gate.open();
    assertThat(ranAfterTheGate()).isEqualTo(0);
  }

  @Test
  void theTimeACallWaitedForAThread_countsAgainstItsDeadline() throws Exception {
    CallOptions deadline = CallOptions.DEFAULT.withTimeout(Duration.ofSeconds(5));
    Mono<StringValue> call =
        Mono.from(rpc.unary(TestService.ECHO, text("waits"), deadline)).cache();
    call.subscribe();
    gate.awaitQueued(1);
    Thread.sleep(1_000);
    gate.open();
    assertThat(call.block(WAIT)).isEqualTo(text("waits"));
    assertThat(remaining.get()).isLessThan(Duration.ofMillis(4_100));
  }

  /** How many handlers ran, once the gate's tasks have had time to run. */
  private int ranAfterTheGate() throws InterruptedException {
    // A call that is run answers on the same executor; one more (answered) call shows the queue
    // has been worked through.
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, text("probe"), CallOptions.DEFAULT)).block(WAIT))
        .isEqualTo(text("probe"));
    return handled.get() - 1;
  }

  /** An executor that holds its tasks until opened, then runs them (and later ones) on a thread. */
  private static final class Gate implements Executor {
    private final ConcurrentLinkedQueue<Runnable> held = new ConcurrentLinkedQueue<>();
    private final CountDownLatch opened = new CountDownLatch(1);
    private final AtomicInteger queued = new AtomicInteger();

    @Override
    public void execute(Runnable task) {
      queued.incrementAndGet();
      held.add(task);
      if (opened.getCount() == 0) {
        runHeld();
      }
    }

    void open() {
      opened.countDown();
      runHeld();
    }

    private synchronized void runHeld() {
      for (Runnable r; (r = held.poll()) != null; ) {
        Thread t = new Thread(r, "gate");
        t.start();
      }
    }

    void awaitQueued(int n) throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (queued.get() < n && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      assertThat(queued.get()).isGreaterThanOrEqualTo(n);
    }
  }
}
