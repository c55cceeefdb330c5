package io.millrace.core.internal;

import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One in-memory connection on a test loop that the test can break: what one end flushes reaches the
 * other as a read batch, unless the connection is cut first. It frames like TCP (3-byte headroom,
 * batches of prefixed frames), so a replay store sees what it sees on a socket.
 */
final class MemoryPipe {

  final TestLoop loop;
  final End clientEnd = new End("client");
  final End serverEnd = new End("server");
  int framesLeft;

  MemoryPipe(TestLoop loop, int cutAfterFrames) {
    this.loop = loop;
    clientEnd.pipe = this;
    serverEnd.pipe = this;
    clientEnd.peer = serverEnd;
    serverEnd.peer = clientEnd;
    framesLeft = cutAfterFrames > 0 ? cutAfterFrames : Integer.MAX_VALUE;
  }

  void cut() {
    clientEnd.cut();
    serverEnd.cut();
  }

  /** One side of a {@link MemoryPipe}. */
  final class End implements Transport {
    final String name;
    MemoryPipe pipe;
    End peer;
    TransportListener listener;
    final List<ByteBuf> pending = new ArrayList<>();
    final ArrayDeque<ByteBuf> inbound = new ArrayDeque<>();
    boolean closed;
    boolean reading = true;
    boolean blackHole;

    End(String name) {
      this.name = name;
    }

    @Override
    public void setListener(TransportListener listener) {
      this.listener = listener;
      if (closed) {
        loop.executor.execute(listener::onTransportClosed); // as a real transport reports it
      }
    }

    @Override
    public EventExecutor executor() {
      return loop.executor;
    }

    @Override
    public ByteBufAllocator alloc() {
      return loop.alloc;
    }

    @Override
    public int headroom() {
      return FrameHeader.LENGTH_PREFIX_SIZE;
    }

    @Override
    public boolean coalescesFrames() {
      return true;
    }

    @Override
    public void write(ByteBuf frame) {
      if (closed) {
        frame.release();
        return;
      }
      frame.setMedium(frame.readerIndex(), frame.readableBytes() - 3);
      pending.add(frame);
    }

    @Override
    public void writeFrames(ByteBuf frames, int frameCount) {
      if (closed) {
        frames.release();
        return;
      }
      pending.add(frames);
    }

    @Override
    public void flush() {
      if (pending.isEmpty()) {
        return;
      }
      List<ByteBuf> batch = new ArrayList<>(pending);
      pending.clear();
      if (blackHole) {
        batch.forEach(ByteBuf::release);
        return;
      }
      loop.executor.execute(() -> peer.receive(batch));
    }

    private void receive(List<ByteBuf> buffers) {
      for (ByteBuf b : buffers) {
        if (closed) {
          b.release();
          continue;
        }
        while (b.isReadable()) {
          int length = b.readUnsignedMedium();
          inbound.add(b.readRetainedSlice(length));
        }
        b.release();
      }
      deliver();
    }

    private void deliver() {
      boolean any = false;
      ByteBuf frame;
      while (reading && !closed && (frame = inbound.poll()) != null) {
        any = true;
        try {
          listener.onFrame(new LentFrame(frame)); // lent, as a real transport lends it
        } finally {
          frame.release();
        }
        if (--pipe.framesLeft == 0) {
          pipe.cut();
        }
      }
      if (closed) {
        inbound.forEach(ByteBuf::release);
        inbound.clear();
        return;
      }
      if (any) {
        listener.onReadComplete();
      }
    }

    /** Abrupt end: nothing more is delivered, the listener hears the close from a task. */
    void cut() {
      if (closed) {
        return;
      }
      closed = true;
      pending.forEach(ByteBuf::release);
      pending.clear();
      inbound.forEach(ByteBuf::release);
      inbound.clear();
      TransportListener l = listener;
      loop.executor.execute(l::onTransportClosed);
    }

    @Override
    public boolean isWritable() {
      return !closed;
    }

    @Override
    public long queuedBytes() {
      return 0;
    }

    @Override
    public void setReading(boolean reading) {
      boolean resumed = reading && !this.reading;
      this.reading = reading;
      if (resumed) {
        loop.executor.execute(this::deliver);
      }
    }

    @Override
    public void close() {
      pipe.cut();
    }

    @Override
    public void closeGracefully(long timeoutMillis) {
      if (closed) {
        return;
      }
      flush();
      loop.executor.execute(pipe::cut); // after what was flushed has been delivered
    }

    @Override
    public SocketAddress remoteAddress() {
      return InetSocketAddress.createUnresolved(peer.name, 1);
    }

    @Override
    public SocketAddress localAddress() {
      return InetSocketAddress.createUnresolved(name, 1);
    }
  }
}
