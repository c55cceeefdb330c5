package io.millrace.transport.netty;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.internal.Transport;
import io.millrace.core.internal.TransportListener;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameListener;
import io.millrace.frame.FrameReader;
import io.millrace.frame.PayloadFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How the length-prefixed framing lends frames: out of the receive buffer, one view for all of
 * them, with nothing of one frame's handling reaching the next.
 */
class FrameHandlerTest {
  private final EmbeddedChannel channel = new EmbeddedChannel();
  private final List<String> seen = new ArrayList<>();
  private final List<ByteBuf> kept = new ArrayList<>();
  private final List<String> events = new ArrayList<>();

  @Test
  void framesKeptWithRetainedSlice_holdTheirBytesWhileLaterFramesAreReadFromTheSameBuffer() {
    listen(
        new FrameListener() {
          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            seen.add(metadata.toString(US_ASCII) + "/" + data.toString(US_ASCII));
            kept.add(metadata.retainedSlice());
            kept.add(data.retainedSlice());
            // What a careless reader may do to a lent buffer's indices stays with this frame.
            data.skipBytes(data.readableBytes());
            metadata.writerIndex(metadata.readerIndex());
          }
        });
    ByteBuf wire = Unpooled.buffer();
    for (int i = 1; i <= 3; i++) {
      writeFrame(wire, i, "m" + i, "data-" + i);
    }
    ByteBuf fourth = Unpooled.buffer();
    writeFrame(fourth, 4, "m4", "data-4");
    wire.writeBytes(fourth, 5); // the fourth frame arrives in two reads
    channel.writeInbound(wire);
    assertThat(seen).containsExactly("m1/data-1", "m2/data-2", "m3/data-3");

    channel.writeInbound(fourth);
    assertThat(seen).containsExactly("m1/data-1", "m2/data-2", "m3/data-3", "m4/data-4");
    List<String> keptText = new ArrayList<>();
    for (int i = 0; i < kept.size(); i += 2) {
      keptText.add(kept.get(i).toString(US_ASCII) + "/" + kept.get(i + 1).toString(US_ASCII));
    }
    assertThat(keptText).isEqualTo(seen);
    assertThat(wire.refCnt()).as("held by the kept slices").isPositive();
    kept.forEach(ByteBuf::release);
    assertThat(channel.finishAndReleaseAll()).isFalse();
    assertThat(wire.refCnt()).isZero();
    assertThat(fourth.refCnt()).isZero();
  }

  @Test
  void aLentPayload_cannotBeKeptByRetain_andTheConnectionReadsOn() {
    List<Throwable> refused = new ArrayList<>();
    listen(
        new FrameListener() {
          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            seen.add(data.toString(US_ASCII));
            for (ByteBuf lent : new ByteBuf[] {metadata, data}) {
              try {
                lent.retain();
              } catch (IllegalStateException e) {
                refused.add(e);
              }
            }
            assertThatThrownBy(data::release).isInstanceOf(IllegalStateException.class);
            // Growing or compacting would move the bytes of the frames after this one.
            assertThatThrownBy(() -> data.ensureWritable(1))
                .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(data::discardReadBytes).isInstanceOf(IllegalStateException.class);
          }
        });
    ByteBuf wire = Unpooled.buffer();
    writeFrame(wire, 1, "m", "first");
    writeFrame(wire, 3, "m", "second");
    channel.writeInbound(wire);

    assertThat(seen).containsExactly("first", "second");
    assertThat(refused).hasSize(4);
    assertThat(refused.get(0)).hasMessageContaining("retainedSlice()");
    assertThat(channel.finishAndReleaseAll()).isFalse();
    assertThat(wire.refCnt()).isZero();
  }

  @Test
  void aCallbackThatClosesTheConnection_canStillReadTheFrameItWasLent() {
    Transport[] transport = new Transport[1];
    transport[0] =
        listen(
            new FrameListener() {
              @Override
              public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
                // A graceful close drops what is still unread at once: the receive buffer's own
                // reference is released here and now, while this frame is being read.
                transport[0].closeGracefully(1_000);
                seen.add(metadata.toString(US_ASCII) + "/" + data.toString(US_ASCII));
              }
            });
    ByteBuf wire = Unpooled.buffer();
    writeFrame(wire, 1, "m1", "first");
    writeFrame(wire, 3, "m3", "not read: the connection is closing");
    channel.writeInbound(wire);

    assertThat(seen).containsExactly("m1/first");
    assertThat(wire.refCnt()).isZero();
    channel.finishAndReleaseAll();
  }

  @Test
  void aCallbackThatWritesPastItsFrame_failsTheConnectionInsteadOfTheNextFrame() {
    listen(
        new FrameListener() {
          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            seen.add(data.toString(US_ASCII));
            data.writeByte('!'); // a slice of the frame would have refused this
          }
        });
    ByteBuf wire = Unpooled.buffer();
    writeFrame(wire, 1, "m", "first");
    writeFrame(wire, 3, "m", "second");
    channel.writeInbound(wire);

    assertThat(seen).containsExactly("first");
    assertThat(events).contains("onTransportError");
    assertThat(channel.isOpen()).isFalse();
    assertThat(wire.refCnt()).isZero();
  }

  @Test
  void aCallbackThatReleasesWhatItWasLent_failsTheConnectionWithoutFreeingTheBufferTwice() {
    listen(
        new FrameListener() {
          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            seen.add(data.toString(US_ASCII));
            if (seen.size() == 1) {
              data.slice().release(); // a derived view shares the receive buffer's count
            }
          }
        });
    ByteBuf wire = Unpooled.buffer();
    writeFrame(wire, 1, "m", "first");
    writeFrame(wire, 3, "m", "second");
    writeFrame(wire, 5, "m", "third");
    channel.writeInbound(wire);

    assertThat(events).contains("onTransportError");
    assertThat(channel.isOpen()).isFalse();
    assertThat(wire.refCnt()).isZero();
    assertThat(channel.finishAndReleaseAll()).isFalse();
  }

  @Test
  void aCallbackThatWritesPastItsMetadata_failsTheConnection() {
    listen(
        new FrameListener() {
          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            seen.add(metadata.toString(US_ASCII) + "/" + data.toString(US_ASCII));
            metadata.writeByte('!'); // into the data: a slice would have refused it
          }
        });
    ByteBuf wire = Unpooled.buffer();
    writeFrame(wire, 1, "m1", "first");
    writeFrame(wire, 3, "m3", "second");
    channel.writeInbound(wire);

    assertThat(seen).containsExactly("m1/first");
    assertThat(events).contains("onTransportError");
    assertThat(channel.isOpen()).isFalse();
    assertThat(wire.refCnt()).isZero();
  }

  /**
   * Puts the frame handler on the channel with {@code frames} reading every frame it hands over.
   */
  private Transport listen(FrameListener frames) {
    // Frames are read; every other event is only noted.
    TransportListener listener =
        (TransportListener)
            Proxy.newProxyInstance(
                getClass().getClassLoader(),
                new Class<?>[] {TransportListener.class},
                (proxy, method, args) -> {
                  if (method.getName().equals("onFrame")) {
                    FrameReader.read((ByteBuf) args[0], frames);
                  } else {
                    events.add(method.getName());
                  }
                  return null;
                });
    Transport transport =
        FrameHandler.installForResumption(channel, ConnectionConfig.DEFAULT, false);
    transport.setListener(listener);
    return transport;
  }

  /** A PAYLOAD with metadata, length-prefixed as on TCP. */
  private static void writeFrame(ByteBuf wire, int streamId, String metadata, String data) {
    ByteBuf m = Unpooled.copiedBuffer(metadata, US_ASCII);
    ByteBuf d = Unpooled.copiedBuffer(data, US_ASCII);
    ByteBuf frame =
        PayloadFrame.encode(ByteBufAllocator.DEFAULT, 0, streamId, FrameHeader.FLAG_NEXT, m, d);
    wire.writeMedium(frame.readableBytes()).writeBytes(frame);
    frame.release();
    m.release();
    d.release();
  }
}
