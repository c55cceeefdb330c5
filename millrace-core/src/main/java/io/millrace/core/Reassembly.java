package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The fragments of one inbound message received so far.
 *
 * <p>Fragments are kept as retained slices of the frames they came in (no copy). The size charged
 * against the limit is the metadata and data bytes plus {@link #FRAGMENT_OVERHEAD} per fragment, so
 * a peer that floods empty fragments runs into the limit as surely as one that sends a huge
 * message. Event loop only.
 */
final class Reassembly {
  static final int FRAGMENT_OVERHEAD = 16;

  /** The frame type of the first fragment (a REQUEST type or PAYLOAD). */
  final int frameType;

  /** The first fragment's flags (C of a REQUEST_CHANNEL, N of a PAYLOAD). */
  final int firstFlags;

  final int initialRequestN;
  private final CompositeByteBuf metadata;
  private final CompositeByteBuf data;
  private boolean hasMetadata;
  private long charged;

  Reassembly(ByteBufAllocator alloc, int frameType, int firstFlags, int initialRequestN) {
    this.frameType = frameType;
    this.firstFlags = firstFlags;
    this.initialRequestN = initialRequestN;
    this.metadata = alloc.compositeBuffer(Integer.MAX_VALUE);
    this.data = alloc.compositeBuffer(Integer.MAX_VALUE);
  }

  /**
   * Adds a fragment (borrowed buffers: retained here as needed).
   *
   * @return false when the message now exceeds {@code limit}; nothing was added then
   */
  boolean add(ByteBuf fragmentMetadata, ByteBuf fragmentData, int limit) {
    long size =
        charged
            + FRAGMENT_OVERHEAD
            + (fragmentMetadata == null ? 0 : fragmentMetadata.readableBytes())
            + fragmentData.readableBytes();
    if (size > limit) {
      return false;
    }
    charged = size;
    if (fragmentMetadata != null) {
      hasMetadata = true;
      if (fragmentMetadata.isReadable()) {
        metadata.addComponent(true, fragmentMetadata.retainedSlice());
      }
    }
    if (fragmentData.isReadable()) {
      data.addComponent(true, fragmentData.retainedSlice());
    }
    return true;
  }

  /** The reassembled metadata, or null when no fragment had M. Owned by this object. */
  ByteBuf metadata() {
    return hasMetadata ? metadata : null;
  }

  /** The reassembled data. Owned by this object. */
  ByteBuf data() {
    return data;
  }

  void release() {
    metadata.release();
    data.release();
  }
}
