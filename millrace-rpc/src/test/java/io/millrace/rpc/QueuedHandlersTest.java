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
  void aCallPastItsDeadlineWhileItWaited_isNotRun_evenWhenItsCallerDoesNotCancel()
      throws Exception {
    // A caller that leaves the deadline to the server (a 100 ms timeout in the call header, no
    // timer of its own, no CANCEL).
    io.millrace.streams.ReactiveRequester raw = tcp.connect(RpcServer.METADATA_MIME_TYPE);
    io.netty.buffer.ByteBuf header = io.netty.buffer.Unpooled.buffer();
    CallHeader.encode(header, TestService.ECHO.id(), null, 100_000, Headers.EMPTY);
    io.netty.buffer.ByteBuf data =
        io.netty.buffer.Unpooled.wrappedBuffer(text("late").toByteArray());
    Mono<io.millrace.streams.Payload> answer =
        Mono.from(raw.requestResponse(io.millrace.streams.Payload.of(header, data))).cache();
    answer.subscribe(p -> {}, e -> {});
    gate.awaitQueued(1);
    Thread.sleep(300);
    gate.open();
    io.millrace.streams.Payload reply = answer.block(WAIT);
    try {
      ResponseMetadata m =
          ResponseMetadata.decode(reply.metadata(), RpcServer.DEFAULT_MAX_HEADER_BYTES);
      assertThat(m.status().code()).isEqualTo(Status.Code.DEADLINE_EXCEEDED);
    } finally {
      reply.release();
    }
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

  @Test
  @SuppressWarnings({"unchecked", "rawtypes"})
  void blockingFireAndForgetsWaitingForTheirExecutor_areBoundedPerConnection() throws Exception {
    // The blocking flavour's binding: each call's handler goes to the service's own executor,
    // which here runs nothing until released.
    java.util.Queue<Runnable> held = new ConcurrentLinkedQueue<>();
    AtomicInteger logged = new AtomicInteger();
    ServiceDefinition blocking =
        ServiceDefinition.builder(TestService.NAME)
            .method(
                TestService.LOG,
                (StringValue s, ServerContext ctx) ->
                    (org.reactivestreams.Publisher)
                        Blocking.runOnExecutor(held::add, logged::incrementAndGet))
            .build();
    try (RpcOverTcp server = RpcOverTcp.serve(RpcServer.builder().service(blocking).build())) {
      RpcClient client = server.client();
      int max = io.millrace.streams.ReactiveResponder.MAX_FIRE_AND_FORGETS_RUNNING;
      for (int i = 0; i < max + 100; i++) {
        Mono.from(client.fireAndForget(TestService.LOG, text("x"), CallOptions.DEFAULT))
            .block(WAIT);
      }
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (held.size() < max && System.nanoTime() < until) {
        Thread.sleep(5);
      }
      Thread.sleep(300); // for the rest to arrive, and be dropped
      assertThat(held).hasSize(max);
      for (Runnable task; (task = held.poll()) != null; ) {
        task.run();
      }
      assertThat(logged.get()).isEqualTo(max);
    }
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
