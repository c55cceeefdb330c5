package io.millrace.core.internal;

import io.millrace.frame.FrameListener;
import io.millrace.frame.FrameReader;
import io.millrace.frame.FrameType;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/** One frame an engine wrote, decoded into plain values for assertions. */
final class WireFrame {
  int type;
  int streamId;
  int flags;
  long n;
  String metadata;
  String data;
  int errorCode;
  String message;
  int ttl;

  static WireFrame decode(ByteBuf frame) {
    WireFrame f = new WireFrame();
    FrameReader.read(
        frame,
        new FrameListener() {
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
            f.set(FrameType.SETUP, 0, flags, metadata, data);
            f.n = keepAliveIntervalMillis;
          }

          @Override
          public void onLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
            f.set(FrameType.LEASE, 0, 0, metadata, null);
            f.ttl = ttlMillis;
            f.n = numberOfRequests;
          }

          @Override
          public void onKeepAlive(boolean respond, long lastReceivedPosition, ByteBuf data) {
            f.set(FrameType.KEEPALIVE, 0, respond ? 0x80 : 0, null, data);
          }

          @Override
          public void onRequest(
              int frameType,
              int streamId,
              int flags,
              int initialRequestN,
              ByteBuf metadata,
              ByteBuf data) {
            f.set(frameType, streamId, flags, metadata, data);
            f.n = initialRequestN;
          }

          @Override
          public void onRequestN(int streamId, int n) {
            f.set(FrameType.REQUEST_N, streamId, 0, null, null);
            f.n = n;
          }

          @Override
          public void onCancel(int streamId) {
            f.set(FrameType.CANCEL, streamId, 0, null, null);
          }

          @Override
          public void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
            f.set(FrameType.PAYLOAD, streamId, flags, metadata, data);
          }

          @Override
          public void onError(int streamId, int errorCode, String message) {
            f.set(FrameType.ERROR, streamId, 0, null, null);
            f.errorCode = errorCode;
            f.message = message;
          }

          @Override
          public void onMetadataPush(ByteBuf metadata) {
            f.set(FrameType.METADATA_PUSH, 0, 0, metadata, null);
          }

          @Override
          public void onResume(
              int majorVersion,
              int minorVersion,
              ByteBuf token,
              long lastReceivedServerPosition,
              long firstAvailableClientPosition) {
            f.set(FrameType.RESUME, 0, 0, null, null);
          }

          @Override
          public void onResumeOk(long lastReceivedClientPosition) {
            f.set(FrameType.RESUME_OK, 0, 0, null, null);
          }

          @Override
          public void onExt(
              int streamId, int flags, int extendedType, ByteBuf metadata, ByteBuf data) {
            f.set(FrameType.EXT, streamId, flags, metadata, data);
          }
        });
    return f;
  }

  private void set(int type, int streamId, int flags, ByteBuf metadata, ByteBuf data) {
    this.type = type;
    this.streamId = streamId;
    this.flags = flags;
    this.metadata = metadata == null ? null : metadata.toString(StandardCharsets.UTF_8);
    this.data = data == null ? null : data.toString(StandardCharsets.UTF_8);
  }

  boolean has(int flag) {
    return (flags & flag) != 0;
  }

  @Override
  public String toString() {
    return FrameType.name(type)
        + "[stream="
        + streamId
        + " flags=0x"
        + Integer.toHexString(flags)
        + " n="
        + n
        + " metadata="
        + metadata
        + " data="
        + data
        + (type == FrameType.ERROR
            ? " error=0x" + Integer.toHexString(errorCode) + " " + message
            : "")
        + "]";
  }
}
