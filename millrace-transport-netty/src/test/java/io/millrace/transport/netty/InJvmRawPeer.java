package io.millrace.transport.netty;

import io.millrace.core.internal.TransportListener;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.EventExecutor;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A raw peer for {@link TransportSuite} on an in-JVM connection: frames in, frames out. */
final class InJvmRawPeer implements TransportSuite.RawPeer {
  private static final Object END = new Object();

  /**
   * Frames held for {@link #read} before this peer stops reading, as a socket's receive buffer
   * holds bytes: a peer that does not read must push back on the server, as over a socket.
   */
  private static final int BUFFERED_FRAMES = 256;

  private final EventLoopGroup group;
  private final EventExecutor loop;
  private final InJvmTransport transport;
  private final BlockingQueue<Object> inbound;
  private boolean ended;

  private InJvmRawPeer(
      EventLoopGroup group, InJvmTransport transport, BlockingQueue<Object> inbound) {
    this.group = group;
    this.loop = transport.executor();
    this.transport = transport;
    this.inbound = inbound;
  }

  static InJvmRawPeer open(String name) throws Exception {
    EventLoopGroup group = EventLoops.newGroup(IoKind.NIO, 1, "raw-peer");
    EventExecutor loop = group.next();
    BlockingQueue<Object> inbound = new LinkedBlockingQueue<>();
    InJvmTransport transport =
        loop.submit(
                () -> {
                  InJvmTransport t =
                      InJvmServers.connect(
                          name,
                          loop,
                          ByteBufAllocator.DEFAULT,
                          FrameHeader.MAX_FRAME_LENGTH,
                          new WriteBufferWaterMark(32 * 1024, 64 * 1024));
                  t.setListener(new Collector(inbound, t));
                  return t;
                })
            .get(5, TimeUnit.SECONDS);
    return new InJvmRawPeer(group, transport, inbound);
  }

  @Override
  public void send(ByteBuf frame) throws Exception {
    loop.submit(
            () -> {
              transport.write(frame);
              transport.flush();
            })
        .sync();
  }

  /** A frame of {@code length} bytes in one piece: the in-JVM form of a long length prefix. */
  void sendFrameOfLength(int length) throws Exception {
    ByteBuf frame = Unpooled.buffer(length);
    frame.writeInt(1);
    frame.writeShort(0x0A << 10 | FrameHeader.FLAG_NEXT);
    frame.writerIndex(length);
    send(frame);
  }

  @Override
  public void sendRaw(byte[] bytes) {
    throw new UnsupportedOperationException("an in-JVM connection carries frames, not bytes");
  }

  @Override
  public void sendFrames(byte[] lengthPrefixedFrames) throws Exception {
    while (!transport.isWritable()) {
      Thread.sleep(1);
    }
    ByteBuf all = Unpooled.wrappedBuffer(lengthPrefixedFrames);
    loop.submit(
            () -> {
              while (all.readableBytes() >= FrameHeader.LENGTH_PREFIX_SIZE) {
                int length = all.readUnsignedMedium();
                transport.write(Unpooled.copiedBuffer(all.readSlice(length)));
              }
              transport.flush();
            })
        .sync();
  }

  @Override
  public ByteBuf read(Duration timeout) throws Exception {
    if (ended) {
      return null;
    }
    Object next = inbound.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    if (inbound.size() < BUFFERED_FRAMES / 2) {
      loop.execute(() -> transport.setReading(true)); // room again: read on
    }
    if (next == null) {
      throw new AssertionError("nothing read within " + timeout);
    }
    if (next == END) {
      ended = true;
      return null;
    }
    return (ByteBuf) next;
  }

  @Override
  public void close() {
    loop.execute(transport::close);
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    for (Object o; (o = inbound.poll()) != null; ) {
      ReferenceCountUtil.release(o);
    }
  }

  private static final class Collector implements TransportListener {
    private final BlockingQueue<Object> inbound;
    private final InJvmTransport transport;
    private boolean ended;

    Collector(BlockingQueue<Object> inbound, InJvmTransport transport) {
      this.inbound = inbound;
      this.transport = transport;
    }

    @Override
    public void onFrame(ByteBuf frame) {
      if (!ended) {
        inbound.add(Unpooled.copiedBuffer(frame));
        if (inbound.size() >= BUFFERED_FRAMES) {
          transport.setReading(false); // full: until read() takes some
        }
      }
    }

    @Override
    public void onReadComplete() {}

    @Override
    public void onWritabilityChanged() {}

    @Override
    public void onFrameTooLong(long length) {
      end();
    }

    @Override
    public void onInputClosed() {
      end();
    }

    @Override
    public void onTransportError(Throwable cause) {
      end();
    }

    @Override
    public void onTransportClosed() {
      end();
    }

    private void end() {
      if (!ended) {
        ended = true;
        inbound.add(END);
      }
    }
  }
}
