package io.millrace.core;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;

/**
 * The fragments of one inbound message received so far.
 *
 * <p>Fragmentation design (receive side). The first fragment is a request frame or a PAYLOAD with
 * F; continuations are PAYLOADs; the last one has no F. Every fragment may carry its own metadata
 * (M) but all metadata must precede any data. The spec warns that a fragment sequence may never
 * end, so memory is charged as it arrives: the metadata and data bytes plus {@link
 * #FRAGMENT_OVERHEAD} per fragment, which makes floods of empty fragments hit the limit too. The
 * engine caps each message ({@link ConnectionConfig#maxReassembledLength()}) and the sum over all
 * messages of a connection ({@link ConnectionConfig#maxReassemblyBytesPerConnection()}).
 *
 * <p>Large fragments are kept as retained slices of the frames they came in (no copy); fragments
 * under {@link #COPY_BELOW} bytes are copied, so that a peer sending tiny fragments cannot pin a
 * whole receive buffer per charged byte. Event loop only.
 */
final class Reassembly {
  static final int FRAGMENT_OVERHEAD = 16;
  static final int COPY_BELOW = 4096;

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
  private final CompositeByteBuf metadata;
  private final CompositeByteBuf data;
  private boolean hasMetadata;
  private long charged;

  Reassembly(ByteBufAllocator alloc, int frameType, int firstFlags, int initialRequestN) {
    this.alloc = alloc;
    this.frameType = frameType;
    this.firstFlags = firstFlags;
    this.initialRequestN = initialRequestN;
    this.metadata = alloc.compositeBuffer(Integer.MAX_VALUE);
    this.data = alloc.compositeBuffer(Integer.MAX_VALUE);
  }

  /** Bytes charged so far. */
  long charged() {
    return charged;
  }

  /**
   * Adds a fragment (borrowed buffers: copied or retained here as needed).
   *
   * @return {@link #OK}, or why the fragment was refused (nothing was added then)
   */
  int add(ByteBuf fragmentMetadata, ByteBuf fragmentData, int limit) {
    if (fragmentMetadata != null && fragmentMetadata.isReadable() && data.isReadable()) {
      return METADATA_AFTER_DATA;
    }
    long size =
        charged
            + FRAGMENT_OVERHEAD
            + (fragmentMetadata == null ? 0 : fragmentMetadata.readableBytes())
            + fragmentData.readableBytes();
    if (size > limit) {
      return TOO_LONG;
    }
    charged = size;
    if (fragmentMetadata != null) {
      hasMetadata = true;
      keep(metadata, fragmentMetadata);
    }
    keep(data, fragmentData);
    return OK;
  }

  private void keep(CompositeByteBuf into, ByteBuf fragment) {
    int length = fragment.readableBytes();
    if (length == 0) {
      return;
    }
    ByteBuf part =
        length < COPY_BELOW
            ? alloc.buffer(length).writeBytes(fragment, fragment.readerIndex(), length)
            : fragment.retainedSlice();
    into.addComponent(true, part);
  }

  /** The reassembled metadata, or null when no fragment had M. Owned by this object. */
  ByteBuf metadata() {
    return hasMetadata ? metadata : null;
  }

  /** The reassembled data. Owned by this object. */
  ByteBuf data() {
    return data;
  }

  /** Releases the fragments; the engine's {@code releaseReassembly} calls this. */
  void release() {
    metadata.release();
    data.release();
  }
}
