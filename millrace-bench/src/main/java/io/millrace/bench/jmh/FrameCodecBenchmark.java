package io.millrace.bench.jmh;

import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameListener;
import io.millrace.frame.FrameReader;
import io.millrace.frame.PayloadFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Encoding and decoding one PAYLOAD frame. Run with the allocation profiler:
 *
 * <pre>java -jar millrace-bench/target/millrace-bench.jar jmh FrameCodec -prof gc</pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class FrameCodecBenchmark {
  @Param({"8", "128", "512"})
  int size;

  private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
  private ByteBuf data;
  private ByteBuf frame;
  private Listener listener;

  /** Consumes payload callbacks into a Blackhole. */
  static final class Listener implements FrameListener {
    Blackhole bh;

    @Override
    public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
      bh.consume(streamId);
      bh.consume(data);
    }
  }

  @Setup
  public void setUp(Blackhole bh) {
    data = alloc.directBuffer(size).writerIndex(size);
    frame = PayloadFrame.encode(alloc, 0, 1, FrameHeader.FLAG_NEXT, null, data);
    listener = new Listener();
    listener.bh = bh;
  }

  @TearDown
  public void tearDown() {
    data.release();
    frame.release();
  }

  @Benchmark
  public void encodePayload() {
    PayloadFrame.encode(alloc, 3, 1, FrameHeader.FLAG_NEXT, null, data).release();
  }

  @Benchmark
  public boolean decodePayload() {
    frame.readerIndex(0); // the reader hands the frame over as data, moving its reader index
    return FrameReader.read(frame, listener);
  }
}
