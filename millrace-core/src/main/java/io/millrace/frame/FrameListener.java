package io.millrace.frame;

import io.netty.buffer.ByteBuf;

/**
 * Receives the frames that {@link FrameReader} decodes, one call per frame.
 *
 * <p>Ownership: every {@link ByteBuf} argument is a view of the frame being read, borrowed for the
 * duration of the call. The reader's caller releases the frame afterwards; a listener that keeps a
 * buffer past the call takes a view of its own with {@code retainedSlice()} (or copies it) and
 * releases that later. Not {@code retain()}: the {@code data} of requests and payloads is the frame
 * buffer itself, positioned at the data, and their metadata may be a view the frame lends again for
 * the next frame (see {@link FrameReader} and {@link LentFrameBuffer}). A null metadata argument
 * means the M flag was not set (no metadata, as opposed to empty).
 */
public interface FrameListener {

  /** SETUP. {@code resumeToken} is null unless R is set. */
  default void onSetup(
      int flags,
      int majorVersion,
      int minorVersion,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      ByteBuf resumeToken,
      String metadataMimeType,
      String dataMimeType,
      ByteBuf metadata,
      ByteBuf data) {}

  default void onLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {}

  default void onKeepAlive(boolean respond, long lastReceivedPosition, ByteBuf data) {}

  /**
   * REQUEST_RESPONSE, REQUEST_FNF, REQUEST_STREAM or REQUEST_CHANNEL ({@code frameType} tells
   * which). {@code initialRequestN} is 0 for the first two; {@code flags} carries F and C.
   */
  default void onRequest(
      int frameType,
      int streamId,
      int flags,
      int initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {}

  /** REQUEST_N with n from 1 to 2^31-1. */
  default void onRequestN(int streamId, int n) {}

  default void onCancel(int streamId) {}

  /** PAYLOAD; {@code flags} carries F, C and N. */
  default void onPayload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {}

  default void onError(int streamId, int errorCode, String message) {}

  default void onMetadataPush(ByteBuf metadata) {}

  default void onResume(
      int majorVersion,
      int minorVersion,
      ByteBuf token,
      long lastReceivedServerPosition,
      long firstAvailableClientPosition) {}

  default void onResumeOk(long lastReceivedClientPosition) {}

  /** EXT, with or without the ignore flag (I) in {@code flags}. */
  default void onExt(int streamId, int flags, int extendedType, ByteBuf metadata, ByteBuf data) {}

  /**
   * A frame of a type this codec does not know, without the ignore flag: the receiver must not
   * ignore it. Its body is not decoded.
   */
  default void onUnknownFrame(int streamId, int frameType, int flags) {}
}
