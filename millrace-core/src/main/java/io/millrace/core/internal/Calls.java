package io.millrace.core.internal;

import io.millrace.core.PayloadEncoder;
import io.netty.buffer.ByteBuf;

/** The calls {@link ConnectionEngine} hands from other threads to its loop. */
final class Calls {
  private Calls() {}

  static long bytes(ByteBuf metadata, ByteBuf data) {
    return (metadata == null ? 0 : metadata.readableBytes())
        + (data == null ? 0 : data.readableBytes());
  }

  static final CallQueue.Call CLOSE = new Control(ConnectionEngine::close);

  static final CallQueue.Call CLOSE_FOR_SHUTDOWN = new Control(ConnectionEngine::closeForShutdown);

  static final CallQueue.Call DISPOSE = new Control(ConnectionEngine::dispose);

  /** Close and dispose: no payload, never refused, nothing to release or tell when not run. */
  private static final class Control extends CallQueue.Call {
    private final java.util.function.Consumer<ConnectionEngine> action;

    Control(java.util.function.Consumer<ConnectionEngine> action) {
      this.action = action;
    }

    @Override
    long bytes() {
      return 0;
    }

    @Override
    void run(ConnectionEngine engine) {
      action.accept(engine);
    }

    @Override
    void fail(int errorCode, String message) {}

    @Override
    void release() {}

    @Override
    boolean bypassesBound() {
      return true;
    }
  }

  /** A request-response, request-stream or request-channel. */
  static final class Request extends CallQueue.Call {
    private final DefaultStream stream;
    private final int type;
    private final ByteBuf metadata;
    private final ByteBuf data;
    private final long initialRequestN;
    private final boolean complete;

    Request(
        DefaultStream stream,
        int type,
        ByteBuf metadata,
        ByteBuf data,
        long initialRequestN,
        boolean complete) {
      this.stream = stream;
      this.type = type;
      this.metadata = metadata;
      this.data = data;
      this.initialRequestN = initialRequestN;
      this.complete = complete;
    }

    @Override
    long bytes() {
      return Calls.bytes(metadata, data);
    }

    @Override
    void run(ConnectionEngine engine) {
      engine.sendRequest(stream, type, metadata, data, initialRequestN, complete);
    }

    @Override
    void fail(int errorCode, String message) {
      release();
      stream.failLocally(errorCode, message);
    }

    @Override
    void release() {
      DefaultStream.release(metadata, data);
    }
  }

  /**
   * A request-response or request-stream whose data the loop encodes into the request frame; its
   * size in the hand-off's bound is the encoder's length, read when the call was made.
   */
  static final class EncodedRequest<T> extends CallQueue.Call {
    private final DefaultStream stream;
    private final int type;
    private final ByteBuf metadata;
    private final T value;
    private final PayloadEncoder<? super T> encoder;
    private final long initialRequestN;
    private final int dataLength;

    EncodedRequest(
        DefaultStream stream,
        int type,
        ByteBuf metadata,
        T value,
        PayloadEncoder<? super T> encoder,
        int dataLength,
        long initialRequestN) {
      this.stream = stream;
      this.type = type;
      this.metadata = metadata;
      this.value = value;
      this.encoder = encoder;
      this.dataLength = dataLength;
      this.initialRequestN = initialRequestN;
    }

    @Override
    long bytes() {
      return Calls.bytes(metadata, null) + dataLength;
    }

    @Override
    void run(ConnectionEngine engine) {
      engine.sendRequest(stream, type, metadata, value, encoder, initialRequestN);
    }

    @Override
    void fail(int errorCode, String message) {
      release();
      stream.failLocally(errorCode, message);
    }

    @Override
    void release() {
      DefaultStream.release(metadata, null);
    }
  }

  /** A fire-and-forget whose data the loop encodes into the frame. */
  static final class EncodedFireAndForget<T> extends CallQueue.Call {
    private final ByteBuf metadata;
    private final T value;
    private final PayloadEncoder<? super T> encoder;
    private final int dataLength;

    EncodedFireAndForget(
        ByteBuf metadata, T value, PayloadEncoder<? super T> encoder, int dataLength) {
      this.metadata = metadata;
      this.value = value;
      this.encoder = encoder;
      this.dataLength = dataLength;
    }

    @Override
    long bytes() {
      return Calls.bytes(metadata, null) + dataLength;
    }

    @Override
    void run(ConnectionEngine engine) {
      engine.sendFireAndForget(metadata, value, encoder);
    }

    @Override
    void fail(int errorCode, String message) {
      release();
    }

    @Override
    void release() {
      DefaultStream.release(metadata, null);
    }
  }

  static final class FireAndForget extends CallQueue.Call {
    private final ByteBuf metadata;
    private final ByteBuf data;

    FireAndForget(ByteBuf metadata, ByteBuf data) {
      this.metadata = metadata;
      this.data = data;
    }

    @Override
    long bytes() {
      return Calls.bytes(metadata, data);
    }

    @Override
    void run(ConnectionEngine engine) {
      engine.sendFireAndForget(metadata, data);
    }

    @Override
    void fail(int errorCode, String message) {
      release();
    }

    @Override
    void release() {
      DefaultStream.release(metadata, data);
    }
  }

  static final class MetadataPush extends CallQueue.Call {
    private final ByteBuf metadata;

    MetadataPush(ByteBuf metadata) {
      this.metadata = metadata;
    }

    @Override
    long bytes() {
      return metadata.readableBytes();
    }

    @Override
    void run(ConnectionEngine engine) {
      try {
        engine.metadataPush(metadata);
      } catch (IllegalArgumentException e) {
        engine.logCallbackFailure("metadata push from another thread", e);
      }
    }

    @Override
    void fail(int errorCode, String message) {
      release();
    }

    @Override
    void release() {
      metadata.release();
    }
  }

  static final class Lease extends CallQueue.Call {
    private final int ttlMillis;
    private final int requests;
    private final ByteBuf metadata;

    Lease(int ttlMillis, int requests, ByteBuf metadata) {
      this.ttlMillis = ttlMillis;
      this.requests = requests;
      this.metadata = metadata;
    }

    @Override
    long bytes() {
      return metadata == null ? 0 : metadata.readableBytes();
    }

    @Override
    void run(ConnectionEngine engine) {
      try {
        engine.sendLease(ttlMillis, requests, metadata);
      } catch (IllegalStateException e) {
        engine.logCallbackFailure("sendLease from another thread", e);
      }
    }

    @Override
    void fail(int errorCode, String message) {
      release();
    }

    @Override
    void release() {
      if (metadata != null) {
        metadata.release();
      }
    }
  }
}
