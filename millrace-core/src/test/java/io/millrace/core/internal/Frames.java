package io.millrace.core.internal;

import io.millrace.frame.CancelFrame;
import io.millrace.frame.ErrorFrame;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.KeepAliveFrame;
import io.millrace.frame.LeaseFrame;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestChannelFrame;
import io.millrace.frame.RequestFnfFrame;
import io.millrace.frame.RequestNFrame;
import io.millrace.frame.RequestResponseFrame;
import io.millrace.frame.RequestStreamFrame;
import io.millrace.frame.SetupFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.PooledByteBufAllocator;

/** Builds the frames a test peer sends. Returned buffers are owned by the caller. */
final class Frames {
  static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;

  private Frames() {}

  static ByteBuf utf8(String s) {
    return s == null ? null : ByteBufUtil.writeUtf8(ALLOC, s);
  }

  private static ByteBuf encodeAndRelease(ByteBuf metadata, ByteBuf data, ByteBuf frame) {
    if (metadata != null) {
      metadata.release();
    }
    if (data != null) {
      data.release();
    }
    return frame;
  }

  static ByteBuf setup() {
    return setup(false);
  }

  static ByteBuf setup(boolean lease) {
    return SetupFrame.encode(
        ALLOC, 0, lease, 60_000, 120_000, null, "text/plain", "text/plain", null, null);
  }

  static ByteBuf requestResponse(int id, String metadata, String data) {
    ByteBuf m = utf8(metadata);
    ByteBuf d = utf8(data);
    return encodeAndRelease(m, d, RequestResponseFrame.encode(ALLOC, 0, id, false, m, d));
  }

  static ByteBuf fnf(int id, String data) {
    ByteBuf d = utf8(data);
    return encodeAndRelease(null, d, RequestFnfFrame.encode(ALLOC, 0, id, false, null, d));
  }

  static ByteBuf requestStream(int id, long n, String data) {
    ByteBuf d = utf8(data);
    return encodeAndRelease(null, d, RequestStreamFrame.encode(ALLOC, 0, id, false, n, null, d));
  }

  static ByteBuf requestChannel(int id, long n, String data, boolean complete) {
    ByteBuf d = utf8(data);
    return encodeAndRelease(
        null, d, RequestChannelFrame.encode(ALLOC, 0, id, false, complete, n, null, d));
  }

  static ByteBuf payload(int id, int flags, String metadata, String data) {
    ByteBuf m = utf8(metadata);
    ByteBuf d = utf8(data);
    return encodeAndRelease(m, d, PayloadFrame.encode(ALLOC, 0, id, flags, m, d));
  }

  static ByteBuf next(int id, String data) {
    return payload(id, FrameHeader.FLAG_NEXT, null, data);
  }

  static ByteBuf complete(int id) {
    return PayloadFrame.encodeComplete(ALLOC, 0, id);
  }

  static ByteBuf requestN(int id, long n) {
    return RequestNFrame.encode(ALLOC, 0, id, n);
  }

  static ByteBuf cancel(int id) {
    return CancelFrame.encode(ALLOC, 0, id);
  }

  static ByteBuf error(int id, int code, String message) {
    return ErrorFrame.encode(ALLOC, 0, id, code, message);
  }

  static ByteBuf keepAlive(boolean respond, String data) {
    ByteBuf d = utf8(data);
    return encodeAndRelease(null, d, KeepAliveFrame.encode(ALLOC, 0, respond, 0, d));
  }

  static ByteBuf lease(int ttlMillis, int requests) {
    return LeaseFrame.encode(ALLOC, 0, ttlMillis, requests, null);
  }
}
