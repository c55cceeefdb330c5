package io.millrace.transport.netty;

import static org.assertj.core.api.Assertions.assertThat;

import io.millrace.core.internal.TransportListener;
import io.millrace.testing.LoopBlockingExtension;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An in-JVM end that moves to another loop from inside a frame's callback (as a resumed session
 * does when the RESUME came in on another loop) hands every later frame to its listener on the new
 * loop only, once each, in order.
 */
class InJvmTransportMoveTest {
  private final EventExecutor clientLoop = new DefaultEventExecutor();
  private final EventExecutor firstLoop = new DefaultEventExecutor();
  private final EventExecutor secondLoop = new DefaultEventExecutor();

  @AfterEach
  void stop() {
    clientLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    firstLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
    secondLoop.shutdownGracefully(0, 0, TimeUnit.SECONDS);
  }

  @Test
  void aMoveAskedInsideAFramesCallback_takesEffectOnceThatCallbackHasReturned() throws Exception {
    InJvmTransport[] ends =
        InJvmTransport.pair(
            clientLoop,
            UnpooledByteBufAllocator.DEFAULT,
            1 << 20,
            WriteBufferWaterMark.DEFAULT,
            new InetSocketAddress(1),
            firstLoop,
            UnpooledByteBufAllocator.DEFAULT,
            1 << 20,
            WriteBufferWaterMark.DEFAULT,
            new InetSocketAddress(2));
    InJvmTransport client = ends[0];
    InJvmTransport server = ends[1];
    CountDownLatch firstFrame = new CountDownLatch(1);
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch moved = new CountDownLatch(1);
    Recording after = new Recording();
    AtomicReference<EventExecutor> executorRightAfterTheMove = new AtomicReference<>();
    // The first listener asks for the move from inside the first frame's callback, then stays in
    // that callback until the test lets it go: the old loop is still inside its delivery.
    TransportListener before =
        new Recording() {
          @Override
          public void onFrame(ByteBuf frame) {
            server.setReading(false);
            server.moveTo(
                secondLoop,
                () -> {
                  server.setListener(after);
                  server.setReading(true);
                  moved.countDown();
                });
            executorRightAfterTheMove.set(server.executor());
            firstFrame.countDown();
            holdUntil(go);
          }
        };
    firstLoop.submit(() -> server.setListener(before)).get(5, TimeUnit.SECONDS);
    send(client, 1);
    assertThat(firstFrame.await(5, TimeUnit.SECONDS)).isTrue();

    // With the move made at once, the new loop takes the end over now; the next frames then go
    // to it while the old loop is still delivering, and the old loop takes the last one when let
    // go. Made after the callback, the move waits for it.
    boolean movedEarly = moved.await(300, TimeUnit.MILLISECONDS);
    if (movedEarly) {
      after.holdFirstUntilAnotherThreadCalls = true;
      send(client, 2, 3);
      assertThat(after.entered.await(5, TimeUnit.SECONDS)).isTrue();
    }
    go.countDown();
    assertThat(moved.await(5, TimeUnit.SECONDS)).isTrue();
    if (!movedEarly) {
      send(client, 2, 3);
    }
    after.awaitFrames(2);

    assertThat(after.frames).containsExactly(2, 3);
    assertThat(after.threads).allSatisfy(t -> assertThat(t).isEqualTo(threadOf(secondLoop)));
    assertThat(movedEarly)
        .as("moved while the old loop was still in the frame's callback")
        .isFalse();
  }

  private static Thread threadOf(EventExecutor loop) throws Exception {
    return loop.submit(Thread::currentThread).get(5, TimeUnit.SECONDS);
  }

  private static void send(InJvmTransport from, int... values) throws Exception {
    from.executor()
        .submit(
            () -> {
              for (int v : values) {
                from.write(from.alloc().buffer(4).writeInt(v));
              }
              from.flush();
            })
        .get(5, TimeUnit.SECONDS);
  }

  /** Holds a loop on purpose (the tests fail on a blocked loop otherwise), 5 s at most. */
  private static void holdUntil(CountDownLatch latch) {
    try {
      LoopBlockingExtension.onPurpose(() -> latch.await(5, TimeUnit.SECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Records each frame's value and the thread it came on. */
  private static class Recording implements TransportListener {
    final List<Integer> frames = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final CountDownLatch entered = new CountDownLatch(1);
    final CountDownLatch calledOnAnotherThread = new CountDownLatch(1);
    volatile boolean holdFirstUntilAnotherThreadCalls;

    @Override
    public void onFrame(ByteBuf frame) {
      frames.add(frame.getInt(frame.readerIndex()));
      threads.add(Thread.currentThread());
      if (threads.get(0) != Thread.currentThread()) {
        calledOnAnotherThread.countDown();
      }
      if (holdFirstUntilAnotherThreadCalls && frames.size() == 1) {
        entered.countDown();
        holdUntil(calledOnAnotherThread);
      }
    }

    void awaitFrames(int n) throws InterruptedException {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (frames.size() < n && System.nanoTime() < until) {
        Thread.sleep(5);
      }
    }

    @Override
    public void onReadComplete() {}

    @Override
    public void onWritabilityChanged() {}

    @Override
    public void onFrameTooLong(long length) {}

    @Override
    public void onInputClosed() {}

    @Override
    public void onTransportError(Throwable cause) {}

    @Override
    public void onTransportClosed() {}
  }
}
