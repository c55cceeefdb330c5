package io.millrace.frame;

/**
 * What {@link RecordingListener} saw, one record per {@link FrameListener} callback. Buffers are
 * kept as lower-case hex strings ({@code ByteBufUtil.hexDump}) so records compare by value and
 * print readably; null means the frame had no metadata (M flag clear), "" means empty.
 */
sealed interface Decoded {

  record Setup(
      int flags,
      int majorVersion,
      int minorVersion,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      String resumeToken,
      String metadataMimeType,
      String dataMimeType,
      String metadata,
      String data)
      implements Decoded {}

  record Lease(int ttlMillis, int numberOfRequests, String metadata) implements Decoded {}

  record KeepAlive(boolean respond, long lastReceivedPosition, String data) implements Decoded {}

  record Request(
      int frameType, int streamId, int flags, int initialRequestN, String metadata, String data)
      implements Decoded {}

  record RequestN(int streamId, int n) implements Decoded {}

  record Cancel(int streamId) implements Decoded {}

  record Payload(int streamId, int flags, String metadata, String data) implements Decoded {}

  record Error(int streamId, int errorCode, String message) implements Decoded {}

  record MetadataPush(String metadata) implements Decoded {}

  record Resume(
      int majorVersion,
      int minorVersion,
      String token,
      long lastReceivedServerPosition,
      long firstAvailableClientPosition)
      implements Decoded {}

  record ResumeOk(long lastReceivedClientPosition) implements Decoded {}

  record Ext(int streamId, int flags, int extendedType, String metadata, String data)
      implements Decoded {}

  record Unknown(int streamId, int frameType, int flags) implements Decoded {}
}
