package io.millrace.core.internal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

/**
 * The fragments of one inbound message received so far.
 *
 * <p>Fragmentation design (receive side). The first fragment is a request frame or a PAYLOAD with
 * F; continuations are PAYLOADs; the last one has no F. Every fragment may carry its own metadata
 * (M) but all metadata must precede any data. The spec warns that a fragment sequence may never
 * end, so two things are bounded as fragments arrive:
 *
 * <ul>
 *   <li>the message: its metadata and data bytes plus {@link #FRAGMENT_OVERHEAD} per fragment, so
 *       that an endless run of empty fragments hits {@link
 *       io.millrace.core.ConnectionConfig#maxReassembledLength()} too;
 *   <li>memory: what the message really holds, the capacity of its buffers, charged to the
 *       connection's and the server's {@link ReassemblyBudget} as they grow ({@link #held()}).
 * </ul>
 *
 * <p>Every fragment is copied into one growing buffer for the metadata and one for the data,
 * whatever its size: one object per message instead of a buffer and a composite component per
 * fragment, and no fragment pins the receive buffer it arrived in (a retained slice of a 4 KiB
 * fragment could hold a 64 KiB read buffer, which the budget would not see). Large fragmented
 * messages pay one copy. Event loop only.
 */
final class Reassembly {
  static final int FRAGMENT_OVERHEAD = 16;

  /** {@link #add} results. */
  static final int OK = 0;

  static final int TOO_LONG = 1;
  static final int METADATA_AFTER_DATA = 2;

  /** The frame type of the first fragment (a REQUEST type or PAYLOAD). */
  final int frameType;

  /** The first fragment's flags (C of a REQUEST_CHANNEL, N of a PAYLOAD). */
  final int firstFlags;

  final int initialRequestN;
  private final ByteBufAllocator alloc;
  private final int limit;
  private ByteBuf metadata;
  private ByteBuf data;
  private boolean hasMetadata;
  private long length;
  private long held;

  Reassembly(
      ByteBufAllocator alloc, int frameType, int firstFlags, int initialRequestN, int limit) {
    this.alloc = alloc;
    this.frameType = frameType;
    this.firstFlags = firstFlags;
    this.initialRequestN = initialRequestN;
    this.limit = limit;
  }

  /**
   * Takes back the growth since {@code charged} bytes, which the budget refused: releasing this
   * reassembly then gives back only what was charged.
   */
  void forgetGrowthSince(long charged) {
    held = charged;
  }

  /** Bytes of buffer capacity held now. */
  long held() {
    return held;
  }

  /**
   * Adds a fragment (borrowed buffers: copied here).
   *
   * @return {@link #OK}, or why the fragment was refused (nothing was added then)
   */
  int add(ByteBuf fragmentMetadata, ByteBuf fragmentData) {
    int metadataLength = fragmentMetadata == null ? 0 : fragmentMetadata.readableBytes();
    int dataLength = fragmentData.readableBytes();
    if (metadataLength > 0 && data != null && data.isReadable()) {
      return METADATA_AFTER_DATA;
    }
    long size = length + FRAGMENT_OVERHEAD + metadataLength + dataLength;
    if (size > limit) {
      return TOO_LONG;
    }
    length = size;
    if (fragmentMetadata != null) {
      hasMetadata = true;
      metadata = append(metadata, fragmentMetadata);
    }
    data = append(data, fragmentData);
    held = capacity(metadata) + capacity(data);
    return OK;
  }

  private ByteBuf append(ByteBuf into, ByteBuf fragment) {
    int length = fragment.readableBytes();
    if (length == 0) {
      return into;
    }
    if (into == null) {
      into = alloc.buffer(length, limit);
    }
    into.ensureWritable(length);
    int writerIndex = into.writerIndex();
    fragment.getBytes(fragment.readerIndex(), into, writerIndex, length);
    into.writerIndex(writerIndex + length);
    return into;
  }

  private static long capacity(ByteBuf buf) {
    return buf == null ? 0 : buf.capacity();
  }

  /** The reassembled metadata, or null when no fragment had M. Owned by this object. */
  ByteBuf metadata() {
    if (!hasMetadata) {
      return null;
    }
    if (metadata == null) {
      metadata = alloc.buffer(0, 0);
    }
    return metadata;
  }

  /** The reassembled data. Owned by this object. */
  ByteBuf data() {
    if (data == null) {
      data = alloc.buffer(0, 0);
    }
    return data;
  }

  /** Releases the buffers; the engine's {@code releaseReassembly} calls this. */
  void release() {
    if (metadata != null) {
      metadata.release();
      metadata = null;
    }
    if (data != null) {
      data.release();
      data = null;
    }
  }
}
