package io.millrace.streams.internal;

import io.netty.buffer.ByteBuf;

/**
 * A {@link ReadsInPlace} subscriber that takes the payloads it can read at once as the engine's
 * buffers, without a {@link io.millrace.streams.Payload} around them: one object less per received
 * payload on the paths that read every message in place (the RPC client's response reader and the
 * RPC server's channel requests). A payload that has to wait for demand still comes through {@code
 * onNext}, as the subscriber's own.
 */
public interface ReadsBuffersInPlace extends ReadsInPlace {

  /**
   * What {@code onNext} with a {@linkplain io.millrace.streams.Payload#lent lent} payload of {@code
   * metadata} (null: none) and {@code data} would be. Both stay the engine's and are valid until
   * this returns; nothing of them may be kept, and nothing is to be released. Counts as one item of
   * the subscriber's demand, as {@code onNext} does.
   */
  void onNextInPlace(ByteBuf metadata, ByteBuf data);
}
