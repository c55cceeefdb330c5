package io.millrace.bench.jmh;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.core.internal.ConnectionEngine;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestResponseFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The connection engine's per-message path without I/O: a frame in, the listener or responder
 * called, the answer encoded and handed to a transport that discards it.
 *
 * <ul>
 *   <li>{@code responderRequestResponse}: a REQUEST_RESPONSE read and answered (server side);
 *   <li>{@code requesterStreamPayload}: one PAYLOAD of an unbounded request-stream delivered to the
 *       requester's listener (client side).
 * </ul>
 *
 * Run with {@code -prof gc} for bytes allocated per operation (= per message).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 3, time = 3)
@Fork(1)
public class EngineBenchmark {
  @Param({"8", "128", "512"})
  int size;

  private final ByteBufAllocator alloc = ByteBufAllocator.DEFAULT;
  private DiscardingTransport serverTransport;
  private DiscardingTransport clientTransport;
  private ConnectionEngine server;
  private ConnectionEngine client;
  private ByteBuf response;
  private ByteBuf request;
  private ByteBuf streamPayload;
  private ByteBuf responsePayload;
  private ByteBuf fnf;
  private ByteBuf sendData;
  private StreamListener responseListener;
  private int nextId;
  private int nextFnfId;
  private long received;
  private int pending;

  @Setup(Level.Trial)
  public void setUp() {
    response = alloc.directBuffer(size).writerIndex(size);
    ByteBuf data = alloc.directBuffer(size).writerIndex(size);
    request = RequestResponseFrame.encode(alloc, 0, 1, false, null, data);
    streamPayload = PayloadFrame.encode(alloc, 0, 1, FrameHeader.FLAG_NEXT, null, data);
    responsePayload =
        PayloadFrame.encode(
            alloc, 0, 3, FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE, null, data);
    fnf = io.millrace.frame.RequestFnfFrame.encode(alloc, 0, 1, false, null, data);
    sendData =
        io.netty.buffer.Unpooled.unreleasableBuffer(alloc.directBuffer(size).writerIndex(size));
    responseListener =
        new StreamListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            received++;
          }
        };
    data.release();

    serverTransport = new DiscardingTransport();
    server =
        ConnectionEngine.server(
            serverTransport,
            ConnectionConfig.DEFAULT,
            (setup, connection) ->
                new Responder() {
                  @Override
                  public StreamListener requestResponse(Stream stream, ByteBuf m, ByteBuf d) {
                    stream.next(null, response.retainedDuplicate());
                    return null;
                  }
                },
            null);
    server.start(null, null);
    ByteBuf setup = SetupFrame.encode(alloc, 0, false, 60_000, 120_000, null, "a", "b", null, null);
    server.onFrame(setup);
    setup.release();
    server.onReadComplete();

    clientTransport = new DiscardingTransport();
    client = ConnectionEngine.client(clientTransport, ConnectionConfig.DEFAULT, null);
    client.start(null, null);
    Connection connection = client;
    connection.requestStream(
        null,
        alloc.directBuffer(1).writeByte(1),
        Long.MAX_VALUE,
        new StreamListener() {
          @Override
          public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
            received++;
          }
        });
    nextId = 1;
  }

  @Setup(Level.Iteration)
  public void resetStreamIds() {
    nextId = 1; // request-response streams end at once, so their ids can be reused
    nextFnfId = 1;
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    if (!server.isOpen() || !client.isOpen()) {
      throw new IllegalStateException("an engine closed during the benchmark: results are void");
    }
    server.dispose();
    client.dispose();
    serverTransport.runPendingTasks();
    clientTransport.runPendingTasks();
    response.release();
    request.release();
    streamPayload.release();
    responsePayload.release();
    fnf.release();
    sendData.unwrap().release();
  }

  @Benchmark
  public void responderRequestResponse() {
    request.readerIndex(0); // the reader hands the frame over as data, moving its reader index
    request.setInt(0, nextId);
    nextId += 2;
    server.onFrame(request);
    if (++pending == 64) {
      pending = 0;
      server.onReadComplete();
    }
  }

  @Benchmark
  public long requesterStreamPayload() {
    streamPayload.readerIndex(0);
    client.onFrame(streamPayload);
    if (++pending == 64) {
      pending = 0;
      client.onReadComplete();
    }
    return received;
  }

  /** A request-response sent and its response delivered (client side; ids from 3 on). */
  @Benchmark
  public long requesterRequestResponse() {
    Stream stream = client.requestResponse(null, sendData, responseListener);
    responsePayload.readerIndex(0);
    responsePayload.setInt(0, stream.streamId());
    client.onFrame(responsePayload);
    if (++pending == 64) {
      pending = 0;
      client.onReadComplete();
    }
    return received;
  }

  /** A fire-and-forget sent (client side). */
  @Benchmark
  public void requesterFireAndForget() {
    client.fireAndForget(null, sendData);
    if (++pending == 64) {
      pending = 0;
      clientTransport.runPendingTasks();
    }
  }

  /** A fire-and-forget received and handed to the responder (server side). */
  @Benchmark
  public void responderFireAndForget() {
    fnf.readerIndex(0);
    fnf.setInt(0, nextFnfId);
    nextFnfId = nextFnfId + 2 < 0 ? 1 : nextFnfId + 2;
    server.onFrame(fnf);
    if (++pending == 64) {
      pending = 0;
      server.onReadComplete();
    }
  }
}
