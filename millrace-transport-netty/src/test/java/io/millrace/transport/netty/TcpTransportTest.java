package io.millrace.transport.netty;

import io.millrace.core.Connection;
import io.millrace.core.ConnectionConfig;
import io.millrace.frame.FrameHeader;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** The transport suite over TCP (epoll on Linux, NIO elsewhere). */
class TcpTransportTest extends TransportSuite {

  private static final class Server implements ServerHandle {
    final TcpServer server;
    final TcpClient client = TcpClient.builder().build();

    Server(TcpServer server) {
      this.server = server;
    }

    @Override
    public void shutdown() {
      server.shutdown();
    }

    @Override
    public boolean awaitTermination(Duration timeout) throws InterruptedException {
      return server.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
      client.shutdownNow();
      server.shutdownNow();
      try {
        client.awaitTermination(10, TimeUnit.SECONDS);
        server.awaitTermination(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  @Override
  protected ServerHandle startServer(ServerOptions options) throws Exception {
    TcpServer.Builder builder =
        TcpServer.builder()
            .config(options.config)
            .allocator(options.allocator)
            .maxConnections(options.maxConnections);
    if (options.asyncAcceptor != null) {
      builder.asyncAcceptor(options.asyncAcceptor);
    } else {
      builder.acceptor(options.acceptor);
    }
    return new Server(builder.bind());
  }

  @Override
  protected Connection connect(ServerHandle server, ConnectionConfig config) throws Exception {
    Server s = (Server) server;
    TcpClient client = s.client;
    if (config != ConnectionConfig.DEFAULT) {
      TcpClient configured = TcpClient.builder().config(config).build();
      Connection connection =
          configured.connect("127.0.0.1", s.server.port()).get(5, TimeUnit.SECONDS);
      connection.onClose().whenComplete((r, f) -> new Thread(configured::shutdownNow).start());
      return connection;
    }
    return client.connect("127.0.0.1", s.server.port()).get(5, TimeUnit.SECONDS);
  }

  @Override
  protected RawPeer openRaw(ServerHandle server) throws Exception {
    Socket socket = new Socket("127.0.0.1", ((Server) server).server.port());
    socket.setTcpNoDelay(true);
    OutputStream out = socket.getOutputStream();
    DataInputStream in = new DataInputStream(socket.getInputStream());
    return new RawPeer() {
      @Override
      public void send(ByteBuf frame) throws Exception {
        try {
          int length = frame.readableBytes();
          byte[] bytes = new byte[3 + length];
          bytes[0] = (byte) (length >>> 16);
          bytes[1] = (byte) (length >>> 8);
          bytes[2] = (byte) length;
          frame.getBytes(frame.readerIndex(), bytes, 3, length);
          out.write(bytes);
        } finally {
          frame.release();
        }
      }

      @Override
      public void sendRaw(byte[] bytes) throws Exception {
        out.write(bytes);
      }

      @Override
      public ByteBuf read(Duration timeout) throws Exception {
        socket.setSoTimeout((int) timeout.toMillis());
        try {
          int length = in.readUnsignedByte() << 16 | in.readUnsignedShort();
          byte[] frame = new byte[length];
          in.readFully(frame);
          return Unpooled.wrappedBuffer(frame);
        } catch (EOFException e) {
          return null;
        } catch (SocketTimeoutException e) {
          throw new AssertionError("nothing read within " + timeout, e);
        } catch (java.net.SocketException e) {
          return null; // reset by the server: closed
        }
      }

      @Override
      public void close() {
        try {
          socket.close();
        } catch (java.io.IOException e) {
          // closing anyway
        }
      }
    };
  }

  @Override
  protected void sendOversizedFrameHeader(RawPeer peer, int length) throws Exception {
    peer.sendRaw(
        new byte[] {
          (byte) (length >>> 16),
          (byte) (length >>> 8),
          (byte) length,
          0,
          0,
          0,
          1,
          (byte) (0x0A << 2 | FrameHeader.FLAG_NEXT >>> 8),
          (byte) FrameHeader.FLAG_NEXT
        });
  }
}
