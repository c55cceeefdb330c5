package io.millrace.frame;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FrameListener} that copies every callback into a {@link Decoded} record. Reading each
 * borrowed slice in full also proves that the reader handed out slices inside the frame.
 */
final class RecordingListener implements FrameListener {
  private final List<Decoded> events = new ArrayList<>();

  List<Decoded> events() {
    return events;
  }

  /**
   * Reads one frame that must be well formed, checks that the reader left the frame's bounds alone
   * (it may advance the reader index to hand the frame over as the data), and returns the single
   * callback it made.
   */
  static Decoded decode(ByteBuf frame) {
    int readerIndex = frame.readerIndex();
    int writerIndex = frame.writerIndex();
    RecordingListener listener = new RecordingListener();
    assertThat(FrameReader.read(frame, listener)).as("read returns true").isTrue();
    assertThat(frame.readerIndex()).as("reader index").isGreaterThanOrEqualTo(readerIndex);
    frame.readerIndex(readerIndex);
    assertThat(frame.writerIndex()).as("writer index").isEqualTo(writerIndex);
    assertThat(listener.events).as("callbacks for one frame").hasSize(1);
    return listener.events.get(0);
  }

  private static String hex(ByteBuf buf) {
    return buf == null ? null : ByteBufUtil.hexDump(buf);
  }

  @Override
  public void onSetup(
      int flags,
      int majorVersion,
      int minorVersion,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      ByteBuf resumeToken,
      String metadataMimeType,
      String dataMimeType,
      ByteBuf metadata,
      ByteBuf data) {
    events.add(
        new Decoded.Setup(
            flags,
            majorVersion,
            minorVersion,
            keepAliveIntervalMillis,
            maxLifetimeMillis,
            hex(resumeToken),
            metadataMimeType,
            dataMimeType,
            hex(metadata),
            hex(data)));
  }

  @Override
  public void onLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    events.add(new Decoded.Lease(ttlMillis, numberOfRequests, hex(metadata)));
  }

  @Override
  public void onKeepAlive(boolean respond, long lastReceivedPosition, ByteBuf data) {
    events.add(new Decoded.KeepAlive(respond, lastReceivedPosition, hex(data)));
  }

  @Override
  public void onRequest(
      int frameType, int streamId, int flags, int initialRequestN, ByteBuf metadata, ByteBuf data) {
    events.add(
        new Decoded.Request(frameType, streamId, flags, initialRequestN, hex(metadata), hex(data)));
  }

  @Override
  public void onRequestN(int streamId, int n) {
    events.add(new Decoded.RequestN(streamId, n));
  }

  @Override
  public void onCancel(int streamId) {
    events.add(new Decoded.Cancel(streamId));
  }

  @Override
  public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
    events.add(new Decoded.Payload(streamId, flags, hex(metadata), hex(data)));
  }

  @Override
  public void onError(int streamId, int errorCode, String message) {
    events.add(new Decoded.Error(streamId, errorCode, message));
  }

  @Override
  public void onMetadataPush(ByteBuf metadata) {
    events.add(new Decoded.MetadataPush(hex(metadata)));
  }

  @Override
  public void onResume(
      int majorVersion,
      int minorVersion,
      ByteBuf token,
      long lastReceivedServerPosition,
      long firstAvailableClientPosition) {
    events.add(
        new Decoded.Resume(
            majorVersion,
            minorVersion,
            hex(token),
            lastReceivedServerPosition,
            firstAvailableClientPosition));
  }

  @Override
  public void onResumeOk(long lastReceivedClientPosition) {
    events.add(new Decoded.ResumeOk(lastReceivedClientPosition));
  }

  @Override
  public void onExt(int streamId, int flags, int extendedType, ByteBuf metadata, ByteBuf data) {
    events.add(new Decoded.Ext(streamId, flags, extendedType, hex(metadata), hex(data)));
  }

  @Override
  public void onUnknownFrame(int streamId, int frameType, int flags) {
    events.add(new Decoded.Unknown(streamId, frameType, flags));
  }
}
