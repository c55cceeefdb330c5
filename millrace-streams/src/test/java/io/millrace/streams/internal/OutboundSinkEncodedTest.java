package io.millrace.streams.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.millrace.core.Connection;
import io.millrace.core.PayloadEncoder;
import io.millrace.core.Stream;
import io.millrace.streams.Payload;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.DefaultEventLoop;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An outbound stream's sink taking items as their parts ({@link TakesEncoded}), against a stand-in
 * stream, without sockets: what goes straight out, what waits and keeps its place, and what a
 * failed write does.
 */
class OutboundSinkEncodedTest {
  private final DefaultEventLoop loop = new DefaultEventLoop();
  private final RecordingStream stream = new RecordingStream(loop);

  @AfterEach
  void stop() throws InterruptedException {
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    stream.frame.release();
  }

  /** Writes an ASCII string's bytes, allocating nothing; "boom" fails. */
  private static final PayloadEncoder<String> ASCII =
      new PayloadEncoder<>() {
        @Override
        public int length(String value) {
          return value.length();
        }

        @Override
        public void encode(String value, ByteBuf out, int index, int length) {
          if (value.equals("boom")) {
            throw new IllegalStateException("cannot encode " + value);
          }
          for (int i = 0; i < length; i++) {
            out.setByte(index + i, value.charAt(i));
          }
        }
      };

  private <T> T onLoop(Callable<T> task) throws Exception {
    return loop.submit(task).get(5, TimeUnit.SECONDS);
  }

  private void onLoop(Runnable task) throws Exception {
    loop.submit(task).get(5, TimeUnit.SECONDS);
  }

  private OutboundSink subscribed(Requests upstream) throws Exception {
    OutboundSink sink = new OutboundSink(loop, stream, 16);
    onLoop(() -> sink.onSubscribe(upstream));
    return sink;
  }

  @Test
  void largePayloads_areAskedForAMebibyteAtATime_smallOnesAPrefetchAtATime() throws Exception {
    stream.record = false;
    for (int size : new int[] {128 * 1024, 8}) {
      Requests upstream = new Requests();
      OutboundSink sink = new OutboundSink(loop, stream, 256);
      onLoop(() -> sink.onSubscribe(upstream));
      assertThat(upstream.requested).as("before a size is known").hasValue(16);
      onLoop(
          () -> {
            for (int i = 0; i < 16; i++) {
              sink.onNextEncoded(null, "x".repeat(size), REPEATED);
            }
          });
      long ahead = upstream.requested.get() - 16; // asked for and not sent yet
      if (size > 8) {
        assertThat(ahead).as("about a mebibyte of them").isEqualTo((1 << 20) / (size + 12));
      } else {
        assertThat(ahead).as("the prefetch, less what went since").isGreaterThan(200);
      }
    }
  }

  @Test
  void aPublisherOnAnotherThread_isAskedForAReadersWindow_notThePrefetch() throws Exception {
    stream.record = false;
    Requests onLoop = new Requests();
    OutboundSink loopSink = new OutboundSink(loop, stream, 16);
    onLoop(() -> loopSink.onSubscribe(onLoop));
    onLoop(
        () -> {
          for (int i = 0; i < 16; i++) {
            loopSink.onNextEncoded(null, "x", REPEATED);
          }
        });
    assertThat(onLoop.requested.get() - 16).as("on the loop: the prefetch ahead").isEqualTo(16);

    Requests offLoop = new Requests();
    OutboundSink sink = new OutboundSink(loop, stream, 16);
    onLoop(() -> sink.onSubscribe(offLoop));
    for (int i = 0; i < 16; i++) {
      sink.onNextEncoded(null, "x", REPEATED); // from this thread: each is queued for the loop
    }
    onLoop(() -> {}); // the drains that sent them and asked again (one, or one per item)
    assertThat(offLoop.requested.get())
        .as("each refill would wake this thread: a blocking reader's window ahead")
        .isBetween((long) ReadAhead.MAX_AHEAD, ReadAhead.MAX_AHEAD + 16L);

    // The same Publisher now emits on the loop: its window is the prefetch again.
    long sentSoFar = offLoop.requested.get(); // 16 sent, the rest sent on the loop below
    onLoop(
        () -> {
          for (long i = 16; i < sentSoFar; i++) {
            sink.onNextEncoded(null, "x", REPEATED);
          }
        });
    assertThat(offLoop.requested.get() - sentSoFar)
        .as("asked for ahead once the payloads come from the loop")
        .isLessThanOrEqualTo(16);
  }

  /** Writes nothing: a value's length, as if encoded (the stand-in's frame is small). */
  private static final PayloadEncoder<String> REPEATED =
      new PayloadEncoder<>() {
        @Override
        public int length(String value) {
          return value.length();
        }

        @Override
        public void encode(String value, ByteBuf out, int index, int length) {}
      };

  @Test
  void onTheLoop_anItemGoesStraightToTheStream_asItsValueAndEncoder() throws Exception {
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    assertThat(upstream.requested).as("the window").hasValue(16);
    ByteBuf metadata = Buffers.direct("m");
    onLoop(() -> sink.onNextEncoded(metadata, "a", ASCII));
    onLoop(() -> sink.onNextEncoded(null, "b", ASCII));
    assertThat(stream.events).containsExactly("encoded a meta m", "encoded b");
    assertThat(metadata.refCnt()).as("taken over by the stream, which released it").isZero();
  }

  @Test
  void onTheLoop_anItemThatGoesStraightOut_makesNoPayload() throws Exception {
    OutboundSink sink = subscribed(new Requests());
    stream.record = false;
    int items = 20_000;
    Callable<Long> send =
        () -> {
          com.sun.management.ThreadMXBean threads =
              (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
          if (!threads.isThreadAllocatedMemorySupported()
              || !threads.isThreadAllocatedMemoryEnabled()) {
            return -1L;
          }
          long before = threads.getCurrentThreadAllocatedBytes();
          for (int i = 0; i < items; i++) {
            sink.onNextEncoded(null, "x", ASCII);
          }
          return threads.getCurrentThreadAllocatedBytes() - before;
        };
    assumeTrue(onLoop(send) >= 0, "this JVM counts no allocation per thread"); // and warms up
    long allocated = onLoop(send);
    assertThat(stream.sent).hasValue(2L * items);
    // A payload is 32 bytes: one per item would be 640,000.
    assertThat(allocated).as("counted here").isNotNegative().isLessThan(items);
  }

  @Test
  void whileTheStreamCannotTakeIt_anItemWaits_andGoesOnReady() throws Exception {
    stream.ready = false;
    OutboundSink sink = subscribed(new Requests());
    onLoop(() -> sink.onNextEncoded(null, "waited", ASCII));
    assertThat(stream.events).isEmpty();
    stream.ready = true;
    onLoop(() -> sink.onReady(stream));
    assertThat(stream.events).containsExactly("encoded waited");
  }

  @Test
  void anItemDoesNotOvertakeOneThatWaits_onTheLoopOrFromAnotherThread() throws Exception {
    stream.ready = false;
    OutboundSink sink = subscribed(new Requests());
    sink.onNext(
        Payload.of(Buffers.direct("first"))); // from this thread: it waits, the stream not ready
    onLoop(() -> {}); // the drain that found it could not go
    stream.ready = true; // credit came; onReady has not been told yet
    onLoop(() -> sink.onNextEncoded(null, "second", ASCII));
    sink.onNextEncoded(null, "third", ASCII); // from this thread
    onLoop(() -> {});
    assertThat(stream.events).containsExactly("next first", "encoded second", "encoded third");
  }

  @Test
  void fromAnotherThread_aValueWithoutMetadataWaitsAsItself_makingNoPayload() throws Exception {
    stream.ready = false; // everything sent below waits
    stream.record = false;
    OutboundSink sink = subscribed(new Requests());
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    assumeTrue(
        threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled(),
        "this JVM counts no allocation per thread");
    int items = 20_000;
    java.util.concurrent.CountDownLatch busy = new java.util.concurrent.CountDownLatch(1);
    loop.execute( // the loop busy, so the sink's one drain task stays pending all along
        () -> { // (spins: the tests' BlockHound refuses a wait on a loop)
          long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
          while (busy.getCount() > 0 && System.nanoTime() < until) {
            // (not even onSpinWait, which it counts as blocking too)
          }
        });
    for (int i = 0; i < items; i++) {
      sink.onNextEncoded(null, "x", ASCII); // warms up, and makes the queue
    }
    long allocated;
    try {
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < items; i++) {
        sink.onNextEncoded(null, "y", ASCII);
      }
      allocated = threads.getCurrentThreadAllocatedBytes() - before;
    } finally {
      busy.countDown();
    }
    // A payload and a queue node are 56 bytes: 1,120,000 for these. The queue's arrays take 4 or 8
    // bytes a slot.
    assertThat(allocated).as("counted on this thread").isNotNegative().isLessThan(10L * items);
    stream.ready = true;
    onLoop(() -> sink.onReady(stream));
    assertThat(stream.sent).hasValue(2L * items);
  }

  @Test
  void fromAnotherThread_itemsWithMetadataOrAnotherEncoder_keepTheirPlaceAmongValues()
      throws Exception {
    stream.ready = false;
    OutboundSink sink = subscribed(new Requests());
    PayloadEncoder<String> upper =
        new PayloadEncoder<>() {
          @Override
          public int length(String value) {
            return value.length();
          }

          @Override
          public void encode(String value, ByteBuf out, int index, int length) {
            ASCII.encode(value.toUpperCase(java.util.Locale.ROOT), out, index, length);
          }
        };
    ByteBuf metadata = Buffers.direct("m");
    sink.onNextEncoded(null, "a", ASCII); // waits as itself: ASCII is the sink's value encoder
    sink.onNextEncoded(null, "b", upper); // another encoder: a payload
    sink.onNextEncoded(metadata, "c", ASCII); // metadata: a payload
    sink.onNext(Payload.of(Buffers.direct("d")));
    sink.onNextEncoded(null, "e", ASCII);
    onLoop(() -> {}); // the drain that found the stream not ready
    assertThat(stream.events).isEmpty();
    stream.ready = true;
    onLoop(() -> sink.onReady(stream));
    assertThat(stream.events)
        .containsExactly("encoded a", "encoded B", "encoded c meta m", "next d", "encoded e");
    assertThat(metadata.refCnt()).isZero();
  }

  @Test
  void whatWaitsWhenTheLoopHasGone_isReleasedByTheNextSignal() throws Exception {
    stream.ready = false;
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    ByteBuf waiting = Buffers.direct("m");
    sink.onNextEncoded(null, "value", ASCII);
    sink.onNextEncoded(waiting, "payload", ASCII);
    onLoop(() -> {}); // the drain that found the stream not ready: both wait
    assertThat(waiting.refCnt()).isOne();
    loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    assertThat(loop.isTerminated()).isTrue();
    ByteBuf late = Buffers.direct("late");
    sink.onNextEncoded(late, "late", ASCII); // its signal finds the loop gone
    assertThat(waiting.refCnt()).as("released by the thread that found the loop gone").isZero();
    assertThat(late.refCnt()).isZero();
    assertThat(upstream.cancelled).isTrue();
    assertThat(stream.events).isEmpty();
  }

  @Test
  void aReleaseFromAnotherThread_whileTheLoopSendsWhatWaits_leavesTheQueueToTheLoop()
      throws Exception {
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    stream.hold = true; // the loop stays inside its send of "a", in its turn at the queue
    sink.onNextEncoded(null, "a", ASCII); // from this thread: queued, and the loop takes it
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!stream.holding && System.nanoTime() < until) {
      Thread.sleep(1);
    }
    assertThat(stream.holding).isTrue();
    ByteBuf waiting = Buffers.direct("m");
    sink.onNextEncoded(waiting, "b", ASCII); // waits behind "a"
    sink.loopGone(); // as a thread that found the loop gone would (here it has not)
    assertThat(waiting.refCnt())
        .as("not taken from the queue while the loop takes from it (one consumer at a time)")
        .isOne();
    stream.hold = false;
    onLoop(() -> {});
    assertThat(waiting.refCnt()).as("released by the loop as its turn ended").isZero();
    assertThat(stream.events)
        .as("nothing sent once the loop was found gone")
        .containsExactly("encoded a");
    assertThat(upstream.cancelled).isTrue();
  }

  @Test
  void aSinkWhoseLoopWasFoundGone_neverCompletesAStreamWhoseItemsItReleased() throws Exception {
    stream.ready = false;
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    ByteBuf waiting = Buffers.direct("m");
    sink.onNextEncoded(waiting, "never sent", ASCII);
    onLoop(() -> {});
    sink.loopGone(); // as a thread that found the loop refusing tasks would (it still runs here)
    assertThat(waiting.refCnt()).isZero();
    assertThat(upstream.cancelled).isTrue();
    stream.ready = true;
    sink.onComplete(); // the Publisher's end, which came before it saw the cancel
    onLoop(() -> {});
    assertThat(stream.events).as("no completion after what it released").isEmpty();
    assertThat(sink.isStopped()).isTrue();
  }

  @Test
  void aLoopFoundGoneDuringTheLoopsLastSend_doesNotCompleteWhatItReleased() throws Exception {
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    stream.hold = true; // the loop stays inside its send of "a", in the middle of a drain
    sink.onNextEncoded(null, "a", ASCII);
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!stream.holding && System.nanoTime() < until) {
      Thread.sleep(1);
    }
    assertThat(stream.holding).isTrue();
    ByteBuf waiting = Buffers.direct("m");
    sink.onNextEncoded(waiting, "b", ASCII);
    sink.onComplete(); // the Publisher ended
    sink.loopGone(); // then a thread found the loop gone (as while it runs its last tasks)
    stream.hold = false;
    onLoop(() -> {});
    assertThat(waiting.refCnt()).as("released, not sent").isZero();
    assertThat(stream.events).as("not completed: \"b\" was released").containsExactly("encoded a");
    assertThat(upstream.cancelled).as("it had ended by itself").isFalse();
    assertThat(sink.isStopped()).isTrue();
  }

  @Test
  void aWriteThatFailsTheStream_releasesWhatWaitsBehindIt_once() throws Exception {
    stream.ready = false;
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    ByteBuf waiting = Buffers.direct("m");
    sink.onNextEncoded(null, "boom", ASCII); // from this thread: all three wait
    sink.onNextEncoded(waiting, "behind", ASCII);
    sink.onNextEncoded(null, "x", ASCII);
    onLoop(() -> {});
    stream.ready = true;
    onLoop(() -> sink.onReady(stream)); // "boom" fails the stream inside the loop's turn
    assertThat(stream.events).containsExactly("fail IllegalStateException");
    assertThat(waiting.refCnt()).isZero(); // (a second release would have thrown on the loop)
    assertThat(upstream.cancelled).isTrue();
  }

  @Test
  void anItemThatWaits_isReleasedWhenThePeerCancels() throws Exception {
    stream.ready = false;
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    ByteBuf metadata = Buffers.direct("m");
    onLoop(() -> sink.onNextEncoded(metadata, "kept", ASCII));
    assertThat(metadata.refCnt()).as("waiting").isOne();
    onLoop(() -> sink.onCancel(stream));
    assertThat(metadata.refCnt()).isZero();
    assertThat(upstream.cancelled).isTrue();
    // One more that the Publisher emitted before it saw the cancel, with the stream ready again.
    stream.ready = true;
    ByteBuf late = Buffers.direct("late");
    onLoop(() -> sink.onNextEncoded(late, "late", ASCII));
    assertThat(late.refCnt()).as("released, not sent").isZero();
    assertThat(stream.events).isEmpty();
  }

  @Test
  void aStreamThatThrows_isFailed_andThePublisherCancelled() throws Exception {
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    onLoop(() -> sink.onNextEncoded(null, "throws", ASCII));
    assertThat(stream.events).containsExactly("fail IllegalArgumentException");
    assertThat(upstream.cancelled).isTrue();
    assertThat(sink.isStopped()).isTrue();
  }

  @Test
  void aNullValueOrEncoder_isRefused_andTheMetadataReleased() throws Exception {
    OutboundSink sink = subscribed(new Requests());
    ByteBuf m1 = Buffers.direct("m");
    ByteBuf m2 = Buffers.direct("m");
    assertThat(onLoop(() -> refused(() -> sink.onNextEncoded(m1, null, ASCII)))).isTrue();
    assertThat(onLoop(() -> refused(() -> sink.onNextEncoded(m2, "x", null)))).isTrue();
    assertThat(m1.refCnt()).isZero();
    assertThat(m2.refCnt()).isZero();
    assertThat(stream.events).isEmpty();
  }

  private static boolean refused(Runnable r) {
    try {
      r.run();
      return false;
    } catch (NullPointerException e) {
      return true;
    }
  }

  @Test
  void anItemThatCannotBeEncoded_failsTheStream_andCancelsThePublisher() throws Exception {
    Requests upstream = new Requests();
    OutboundSink sink = subscribed(upstream);
    onLoop(() -> sink.onNextEncoded(null, "boom", ASCII));
    ByteBuf metadata = Buffers.direct("m");
    onLoop(() -> sink.onNextEncoded(metadata, "after", ASCII)); // it had not seen the cancel yet
    assertThat(stream.events).containsExactly("fail IllegalStateException");
    assertThat(upstream.cancelled).isTrue();
    assertThat(sink.isStopped()).isTrue();
    assertThat(metadata.refCnt()).as("released, not sent").isZero();
  }

  @Test
  void onAStreamNotOpenedYet_theFirstItemOpensItAsAPayload() throws Exception {
    List<String> opened = new CopyOnWriteArrayList<>();
    OutboundSink sink =
        new OutboundSink(loop, null, 16) {
          @Override
          protected void open(Payload first) {
            opened.add(first.data().toString(StandardCharsets.UTF_8));
            first.release();
          }
        };
    onLoop(() -> sink.onSubscribe(new Requests()));
    onLoop(() -> sink.onNextEncoded(null, "opens", ASCII));
    assertThat(opened).containsExactly("opens");
  }

  /**
   * A stream with plenty of credit that records what is sent on it, encoding values as the engine
   * would (a failure fails the stream). Written out, not a proxy, so that it allocates nothing per
   * item when it does not record.
   */
  private static final class RecordingStream implements Stream {
    final DefaultEventLoop loop;
    final List<String> events = new CopyOnWriteArrayList<>();
    final AtomicLong sent = new AtomicLong();
    final ByteBuf frame = Unpooled.buffer(256); // what each value is encoded into, reused
    volatile boolean record = true;
    volatile boolean ready = true;
    volatile boolean hold; // next(value) spins while set (BlockHound refuses a wait on the loop)
    volatile boolean holding;
    volatile boolean done;

    RecordingStream(DefaultEventLoop loop) {
      this.loop = loop;
    }

    @Override
    public int streamId() {
      return 1;
    }

    @Override
    public long credit() {
      return Long.MAX_VALUE;
    }

    @Override
    public boolean isReady() {
      return ready && !done;
    }

    @Override
    public void next(ByteBuf metadata, ByteBuf data) {
      events.add(onLoop() + "next " + data.toString(StandardCharsets.UTF_8) + meta(metadata));
      data.release();
      sent.incrementAndGet();
    }

    @Override
    public <T> void next(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
      long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
      while (hold && System.nanoTime() < until) {
        holding = true;
      }
      String meta = meta(metadata);
      if ("throws".equals(value)) {
        throw new IllegalArgumentException("a stream that throws"); // as Stream's default does
      }
      int length = encoder.length(value);
      try {
        encoder.encode(value, frame, 0, length);
        if (record) {
          events.add(
              onLoop() + "encoded " + frame.toString(0, length, StandardCharsets.UTF_8) + meta);
        }
        sent.incrementAndGet();
      } catch (RuntimeException e) {
        fail(e); // as the engine's streams do
      }
    }

    /** Nothing on the loop; a marker off it, where nothing may be sent. */
    private String onLoop() {
      return loop.inEventLoop() ? "" : "OFF THE LOOP: ";
    }

    private static String meta(ByteBuf metadata) {
      if (metadata == null) {
        return "";
      }
      String m = " meta " + metadata.toString(StandardCharsets.UTF_8);
      metadata.release();
      return m;
    }

    @Override
    public void nextAndComplete(ByteBuf metadata, ByteBuf data) {
      throw new UnsupportedOperationException();
    }

    @Override
    public void complete() {
      events.add("complete");
      done = true;
    }

    @Override
    public void error(int errorCode, String message) {
      events.add("error " + errorCode);
      done = true;
    }

    @Override
    public void fail(Throwable cause) {
      events.add("fail " + cause.getClass().getSimpleName());
      done = true;
    }

    @Override
    public void request(long n) {}

    @Override
    public void cancel() {}

    @Override
    public Connection connection() {
      throw new UnsupportedOperationException();
    }

    @Override
    public boolean isCancelled() {
      return false;
    }

    @Override
    public boolean isInboundDone() {
      return false;
    }

    @Override
    public boolean isOutboundDone() {
      return done;
    }
  }
}
