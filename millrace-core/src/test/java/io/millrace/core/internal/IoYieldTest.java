package io.millrace.core.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.IoEventLoop;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.local.LocalIoHandler;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Work continued after the loop's next poll: order against plain tasks, and the loop's end. */
class IoYieldTest {

  @Test
  void aContinuationRunsAfterTheTasksAlreadyQueued_andThoseTheyQueue() throws Exception {
    // On an I/O loop a pass of tasks runs what its tasks add; a continuation waits for the next
    // pass, after the poll.
    MultiThreadIoEventLoopGroup group =
        new MultiThreadIoEventLoopGroup(1, LocalIoHandler.newFactory());
    try {
      IoEventLoop loop = group.next();
      List<String> order = new ArrayList<>();
      CountDownLatch done = new CountDownLatch(1);
      loop.execute(
          () -> {
            assertThat(
                    IoYield.afterIo(
                        loop,
                        () -> {
                          order.add("continuation");
                          done.countDown();
                        },
                        false))
                .isTrue();
            loop.execute(
                () -> {
                  order.add("task");
                  loop.execute(() -> order.add("task of a task"));
                });
          });
      assertThat(done.await(10, TimeUnit.SECONDS)).isTrue();
      assertThat(order).containsExactly("task", "task of a task", "continuation");
    } finally {
      group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
    }
  }

  @Test
  void aContinuationPendingWhenTheLoopShutsDown_stillRuns() throws Exception {
    // The loop cancels its scheduled tasks as it shuts down; a hand-off drain waiting there would
    // otherwise never fail the calls it holds.
    EventExecutor loop = new DefaultEventExecutor();
    CountDownLatch ran = new CountDownLatch(1);
    loop.execute(
        () -> {
          IoYield.afterIo(
              loop,
              () -> {
                assertThat(loop.inEventLoop()).isTrue();
                ran.countDown();
              },
              true);
          loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
        });
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(loop.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
  }

  @Test
  void onALoopShuttingDown_itRunsAsAPlainTask_andALoopThatEndedRefusesIt() throws Exception {
    EventExecutor loop = new DefaultEventExecutor();
    CountDownLatch ran = new CountDownLatch(1);
    boolean[] accepted = new boolean[1];
    loop.execute(
        () -> {
          loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
          accepted[0] = IoYield.afterIo(loop, ran::countDown, true);
        });
    assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(accepted[0]).isTrue();
    assertThat(loop.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(IoYield.afterIo(loop, () -> {}, true)).isFalse();
  }

  @Test
  void workThatNeedNotRun_doesNotRunOnALoopShuttingDown() throws Exception {
    // A producer's next turn: on a loop that is shutting down, plain tasks that add themselves
    // again would keep the loop from ending; the connection's close fails the producers instead.
    EventExecutor loop = new DefaultEventExecutor();
    AtomicInteger ran = new AtomicInteger();
    boolean[] accepted = {true, true};
    loop.execute(
        () -> {
          accepted[0] = IoYield.afterIo(loop, ran::incrementAndGet, false); // pending, cancelled
          loop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
          accepted[1] = IoYield.afterIo(loop, ran::incrementAndGet, false); // refused
        });
    assertThat(loop.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    assertThat(accepted).containsExactly(true, false);
    assertThat(ran).hasValue(0);
  }
}
