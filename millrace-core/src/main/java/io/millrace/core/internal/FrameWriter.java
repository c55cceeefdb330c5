package io.millrace.core.internal;

import io.millrace.core.ConnectionConfig;
import io.millrace.core.PayloadEncoder;
import io.millrace.frame.CancelFrame;
import io.millrace.frame.ErrorFrame;
import io.millrace.frame.FrameBatch;
import io.millrace.frame.FrameHeader;
import io.millrace.frame.FrameType;
import io.millrace.frame.KeepAliveFrame;
import io.millrace.frame.LeaseFrame;
import io.millrace.frame.MetadataPushFrame;
import io.millrace.frame.PayloadFrame;
import io.millrace.frame.RequestChannelFrame;
import io.millrace.frame.RequestFnfFrame;
import io.millrace.frame.RequestNFrame;
import io.millrace.frame.RequestResponseFrame;
import io.millrace.frame.RequestStreamFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.IllegalReferenceCountException;

/**
 * Encodes the engine's outbound frames into the transport, fragmenting payload-bearing frames that
 * exceed the fragment size.
 *
 * <p>Fragmentation design: the limit counts the transport's 3-byte length prefix, as rsocket-java's
 * "mtu" does, so both libraries cut the same message into the same frames. The first fragment is
 * the original frame type with F set; continuations are PAYLOAD frames with N (as rsocket-java
 * sends them) and F, and the last one carries C if the original did. All metadata goes before any
 * data, and each fragment that carries metadata has its own M flag and length. Fragments are slices
 * of the caller's buffers, so fragmenting never copies a payload twice.
 *
 * <p>Batching: on transports that allow it ({@link Transport#coalescesFrames()}), small frames are
 * encoded one after another, each with its length prefix, into one buffer that is handed to the
 * transport when it fills or at the next flush. A stream of 8-byte payloads then costs the
 * transport one write per batch instead of one per frame (Netty's per-write bookkeeping, an atomic
 * update of its pending-bytes counter and a pipeline traversal each). Large frames, and payloads
 * sent without a copy, are handed over on their own after the batch, in order.
 *
 * <p>Ownership: methods taking {@code metadata} and {@code data} release them. A buffer that cannot
 * be read (released by mistake) makes the method throw without writing anything of that frame: a
 * batch keeps the frames before it and takes the ones after it. Event loop only. Writes are not
 * flushed here; {@link ConnectionEngine} flushes once per batch.
 */
final class FrameWriter {
  /** Longest error message sent, in characters. */
  static final int MAX_ERROR_MESSAGE_CHARS = 4096;

  private final Transport transport;
  private final ByteBufAllocator alloc;
  private final int headroom;
  private final int frameLimit;
  private final ConnectionEngine engine;
  private final boolean coalesce;
  private ByteBuf batch;

  /** {@link FrameBatch#address} of the batch, taken when room was last made in it. */
  private long batchAddress;

  /** The batch's capacity when room was last made in it. */
  private int batchCapacity;

  private int batchFrames;

  /**
   * Bytes in the batch last handed over: the next batch starts that big, so that a steady load does
   * not grow (reallocate and copy) each batch from a few frames' size again.
   */
  private int lastBatchBytes;

  private boolean closed;

  /** A batch is handed to the transport before it would grow beyond this. */
  static final int BATCH_CAPACITY = 64 * 1024;

  /** Frames up to this length go into the batch; longer ones are written on their own. */
  static final int MAX_BATCHED_FRAME = 8 * 1024;

  FrameWriter(Transport transport, ConnectionConfig config, ConnectionEngine engine) {
    this.transport = transport;
    this.alloc = transport.alloc();
    this.headroom = transport.headroom();
    this.engine = engine;
    int limit = config.maxFrameLength();
    if (config.fragmentSize() > 0) {
      limit = Math.min(limit, config.fragmentSize() - FrameHeader.LENGTH_PREFIX_SIZE);
    }
    this.frameLimit = limit;
    this.coalesce = transport.coalescesFrames();
  }

  ByteBufAllocator alloc() {
    return alloc;
  }

  int headroom() {
    return headroom;
  }

  void write(ByteBuf frame) {
    handOver();
    int bytes = frame.readableBytes();
    transport.write(frame);
    engine.onHandedOver(bytes);
    engine.onWritten();
  }

  /**
   * Whether a request frame of {@code extra} bytes after its header, {@code metadata} and {@code
   * dataLength} bytes of data goes into a batch when nothing else stops it: a value that will not
   * is better encoded by its caller, on the caller's thread. Any thread (it reads final fields).
   */
  boolean batches(int extra, ByteBuf metadata, int dataLength) {
    int length = FrameBatch.length(extra, metadata, null) + dataLength;
    return coalesce && length <= frameLimit && length <= MAX_BATCHED_FRAME;
  }

  /**
   * The length an encoder gives for {@code value}, checked: a negative one would corrupt the batch
   * the frame is written into.
   */
  static <T> int encodedLength(PayloadEncoder<? super T> encoder, T value) {
    int length = encoder.length(value);
    if (length < 0) {
      throw new IllegalArgumentException(
          "the encoder gave a negative length, " + length + ", for " + value.getClass());
    }
    return length;
  }

  /**
   * Makes room in the batch for a frame of {@code length} bytes (plus its length prefix) and
   * returns the index it goes at, or -1 when the frame should be written on its own. The caller
   * writes the frame with {@link FrameBatch} at that index, into {@link #batch} at {@link
   * #batchAddress}, and then calls {@link #appended} with the index after it. The common case reads
   * two fields and the writer index: this is on every message's path, below however many call
   * levels the sender's own code takes (see {@link FrameBatch}).
   */
  private int reserve(int length) {
    if (!coalesce || closed || length > MAX_BATCHED_FRAME) {
      return -1;
    }
    ByteBuf b = batch;
    if (b == null) {
      return startBatch(length);
    }
    int at = b.writerIndex();
    if (FrameHeader.LENGTH_PREFIX_SIZE + length <= batchCapacity - at) {
      return at;
    }
    return grow(b, at, length);
  }

  /** The batch has no room left for a frame of {@code length}: grows it, or hands it over. */
  private int grow(ByteBuf b, int at, int length) {
    int need = FrameHeader.LENGTH_PREFIX_SIZE + length;
    if (at + need > BATCH_CAPACITY) {
      handOver();
      return startBatch(length);
    }
    b.ensureWritable(need);
    tookRoom(b);
    return at;
  }

  private int startBatch(int length) {
    int initial = Math.max(16 * (length + 3), lastBatchBytes + (lastBatchBytes >>> 3));
    ByteBuf b = alloc.directBuffer(Math.min(BATCH_CAPACITY, initial), BATCH_CAPACITY);
    batch = b;
    tookRoom(b);
    return b.writerIndex();
  }

  private void tookRoom(ByteBuf b) {
    batchAddress = FrameBatch.address(b);
    batchCapacity = b.capacity();
  }

  /**
   * Releases the batch when no frame is in it (made for a frame that then failed), so that an idle
   * connection does not hold it.
   */
  private void dropIfEmpty() {
    ByteBuf b = batch;
    if (b != null && batchFrames == 0) {
      batch = null;
      b.release();
    }
  }

  /**
   * Whether an encoder, application code told to write in place with the room there, resized the
   * batch: its memory may have moved under the frame written so far, so the address is taken again
   * and no later frame goes to the one known before. One compare of the capacity.
   */
  private boolean resizedByEncoder(ByteBuf b) {
    if (b.capacity() == batchCapacity) {
      return false;
    }
    tookRoom(b);
    return true;
  }

  /** A frame went into the batch, up to {@code end}. */
  private void appended(int end) {
    batch.writerIndex(end);
    batchFrames++;
    engine.onWritten();
  }

  /** Appends a frame without payload to the batch at {@code at} (see {@link #reserve}). */
  private void appendBare(int at, int streamId, int type, int flags, int requestN) {
    appended(
        FrameBatch.header(
            batch,
            batchAddress,
            at,
            FrameHeader.SIZE + (requestN == FrameBatch.NO_REQUEST_N ? 0 : 4),
            streamId,
            type,
            flags,
            null,
            requestN));
  }

  /** Gives the frames batched so far to the transport (before a flush or an unbatched write). */
  void handOver() {
    ByteBuf b = batch;
    if (b != null) {
      batch = null;
      int frames = batchFrames;
      batchFrames = 0;
      int bytes = b.readableBytes();
      lastBatchBytes = bytes;
      transport.writeFrames(b, frames);
      engine.onHandedOver(bytes);
    }
  }

  /** Drops a batch that will never be written (the connection closed); batching stops. */
  void discard() {
    closed = true;
    ByteBuf b = batch;
    if (b != null) {
      batch = null;
      batchFrames = 0;
      b.release();
    }
  }

  /**
   * Sends a request frame ({@code type} one of the four REQUEST types); {@code initialRequestN} is
   * ignored for request-response and fire-and-forget.
   */
  void request(
      int type,
      int streamId,
      long initialRequestN,
      boolean complete,
      ByteBuf metadata,
      ByteBuf data) {
    int extra = type == FrameType.REQUEST_STREAM || type == FrameType.REQUEST_CHANNEL ? 4 : 0;
    try {
      int d = data == null ? 0 : data.readableBytes();
      int length =
          FrameHeader.SIZE + extra + (metadata == null ? 0 : 3 + metadata.readableBytes()) + d;
      int at;
      if (length <= frameLimit
          && d < PayloadFrame.ZERO_COPY_THRESHOLD
          && (at = reserve(length)) >= 0) {
        // Written out as in payload(), for the call levels (see FrameBatch).
        ByteBuf b = batch;
        long address = batchAddress;
        at =
            FrameBatch.header(
                b,
                address,
                at,
                length,
                streamId,
                type,
                complete && type == FrameType.REQUEST_CHANNEL ? FrameHeader.FLAG_COMPLETE : 0,
                metadata,
                extra == 0 ? FrameBatch.NO_REQUEST_N : RequestNFrame.clamp(initialRequestN));
        if (metadata != null) {
          at = FrameBatch.metadata(b, address, at, metadata);
        }
        if (data != null) {
          at = FrameBatch.copy(b, address, at, data, d);
        }
        appended(at);
        return;
      }
      if (length <= frameLimit) {
        write(encodeFirst(type, streamId, false, complete, initialRequestN, metadata, data));
      } else {
        checkReadable(metadata, data);
        fragment(
            type,
            streamId,
            extra,
            complete ? FrameHeader.FLAG_COMPLETE : 0,
            initialRequestN,
            metadata,
            data);
      }
    } finally {
      release(metadata, data);
    }
  }

  /**
   * Sends a request frame whose data {@code encoder} writes straight into the batch, as {@link
   * #payload(int, int, ByteBuf, Object, PayloadEncoder)} does for PAYLOAD: a request that does not
   * go into a batch is encoded into a buffer of its own and sent as above. A value that fails to
   * encode throws, and nothing of its frame is written.
   */
  <T> void request(
      int type,
      int streamId,
      long initialRequestN,
      boolean complete,
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder) {
    boolean withN = type == FrameType.REQUEST_STREAM || type == FrameType.REQUEST_CHANNEL;
    int flags = complete && type == FrameType.REQUEST_CHANNEL ? FrameHeader.FLAG_COMPLETE : 0;
    int requestN = withN ? RequestNFrame.clamp(initialRequestN) : FrameBatch.NO_REQUEST_N;
    ByteBuf data = encodeIntoBatch(type, streamId, flags, requestN, metadata, value, encoder);
    if (data != null) {
      request(type, streamId, initialRequestN, complete, metadata, data);
    }
  }

  /**
   * Appends a frame of {@code type} (with {@code requestN}, or {@link FrameBatch#NO_REQUEST_N})
   * whose data {@code encoder} writes straight into the batch, and returns null. When the frame
   * does not go into a batch (too long, or a transport that does not batch) it returns the value
   * encoded into a buffer of its own instead, for the caller to send with {@code metadata}. A value
   * that fails to encode throws, {@code metadata} is released, and nothing of the frame is written.
   */
  private <T> ByteBuf encodeIntoBatch(
      int type,
      int streamId,
      int flags,
      int requestN,
      ByteBuf metadata,
      T value,
      PayloadEncoder<? super T> encoder) {
    ByteBuf data = null;
    try {
      int dataLength = encodedLength(encoder, value);
      int extra = requestN == FrameBatch.NO_REQUEST_N ? 0 : 4;
      int length = FrameBatch.length(extra, metadata, null) + dataLength;
      int at = length <= frameLimit ? reserve(length) : -1;
      if (at < 0) {
        data = encoder.toBuffer(value, alloc);
        return data;
      }
      ByteBuf b = batch;
      long address = batchAddress;
      at = FrameBatch.header(b, address, at, length, streamId, type, flags, metadata, requestN);
      try {
        if (metadata != null) {
          at = FrameBatch.metadata(b, address, at, metadata);
        }
        encoder.encodeAt(value, b, address, at, dataLength);
        if (resizedByEncoder(b)) {
          throw new IllegalStateException(
              "the payload encoder resized the frame buffer: encoders write in place, within the"
                  + " length they gave");
        }
      } catch (Throwable t) {
        resizedByEncoder(b); // resized, and then failed
        dropIfEmpty();
        throw t;
      }
      appended(at + dataLength);
      return null;
    } finally {
      if (data == null) {
        releaseIfLive(metadata); // written into the batch, or not sent
      }
    }
  }

  /** Sends a PAYLOAD with {@code flags} among N and C. */
  void payload(int streamId, int flags, ByteBuf metadata, ByteBuf data) {
    try {
      int d = data == null ? 0 : data.readableBytes();
      int length = FrameHeader.SIZE + (metadata == null ? 0 : 3 + metadata.readableBytes()) + d;
      int at;
      if (length <= frameLimit
          && d < PayloadFrame.ZERO_COPY_THRESHOLD
          && (at = reserve(length)) >= 0) {
        // Every streamed payload passes here: the frame is written out in this method, not through
        // FrameBatch.append, for the call levels (see FrameBatch).
        ByteBuf b = batch;
        long address = batchAddress;
        at =
            FrameBatch.header(
                b,
                address,
                at,
                length,
                streamId,
                FrameType.PAYLOAD,
                flags & (FrameHeader.FLAG_COMPLETE | FrameHeader.FLAG_NEXT),
                metadata,
                FrameBatch.NO_REQUEST_N);
        if (metadata != null) {
          at = FrameBatch.metadata(b, address, at, metadata);
        }
        if (data != null) {
          at = FrameBatch.copy(b, address, at, data, d);
        }
        appended(at);
        return;
      }
      if (length <= frameLimit) {
        write(PayloadFrame.encode(alloc, headroom, streamId, flags, metadata, data));
      } else {
        checkReadable(metadata, data);
        fragment(
            FrameType.PAYLOAD,
            streamId,
            0,
            flags & FrameHeader.FLAG_COMPLETE | flags & FrameHeader.FLAG_NEXT,
            0,
            metadata,
            data);
      }
    } finally {
      release(metadata, data);
    }
  }

  /**
   * Sends a PAYLOAD whose data {@code encoder} writes straight into the batch; a payload that does
   * not go into a batch (too long, or a transport that does not batch) is encoded into a buffer of
   * its own and sent as above. A value that fails to encode throws, and nothing of its frame is
   * written.
   */
  <T> void payload(
      int streamId, int flags, ByteBuf metadata, T value, PayloadEncoder<? super T> encoder) {
    ByteBuf data =
        encodeIntoBatch(
            FrameType.PAYLOAD,
            streamId,
            flags & (FrameHeader.FLAG_COMPLETE | FrameHeader.FLAG_NEXT),
            FrameBatch.NO_REQUEST_N,
            metadata,
            value,
            encoder);
    if (data != null) {
      payload(streamId, flags, metadata, data);
    }
  }

  void complete(int streamId) {
    int at = reserve(FrameHeader.SIZE);
    if (at >= 0) {
      appendBare(
          at, streamId, FrameType.PAYLOAD, FrameHeader.FLAG_COMPLETE, FrameBatch.NO_REQUEST_N);
      return;
    }
    write(PayloadFrame.encodeComplete(alloc, headroom, streamId));
  }

  void requestN(int streamId, long n) {
    int at = reserve(FrameHeader.SIZE + 4);
    if (at >= 0) {
      appendBare(at, streamId, FrameType.REQUEST_N, 0, RequestNFrame.clamp(n));
      return;
    }
    write(RequestNFrame.encode(alloc, headroom, streamId, n));
  }

  void cancel(int streamId) {
    int at = reserve(FrameHeader.SIZE);
    if (at >= 0) {
      appendBare(at, streamId, FrameType.CANCEL, 0, FrameBatch.NO_REQUEST_N);
      return;
    }
    write(CancelFrame.encode(alloc, headroom, streamId));
  }

  /**
   * Sends ERROR. Messages are cut to {@link #MAX_ERROR_MESSAGE_CHARS} characters (at most three
   * UTF-8 bytes each), so that an error can never exceed a peer's frame limit.
   */
  void error(int streamId, int code, String message) {
    String text = message;
    if (text != null && text.length() > MAX_ERROR_MESSAGE_CHARS) {
      text = text.substring(0, MAX_ERROR_MESSAGE_CHARS - 3) + "...";
    }
    write(ErrorFrame.encode(alloc, headroom, streamId, code, text));
  }

  void keepAlive(boolean respond, ByteBuf data) {
    write(KeepAliveFrame.encode(alloc, headroom, respond, transport.receivedPosition(), data));
  }

  void lease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
    try {
      write(LeaseFrame.encode(alloc, headroom, ttlMillis, numberOfRequests, metadata));
    } finally {
      release(metadata, null);
    }
  }

  void metadataPush(ByteBuf metadata) {
    try {
      write(MetadataPushFrame.encode(alloc, headroom, metadata));
    } finally {
      release(metadata, null);
    }
  }

  private ByteBuf encodeFirst(
      int type,
      int streamId,
      boolean follows,
      boolean complete,
      long initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    switch (type) {
      case FrameType.REQUEST_RESPONSE:
        return RequestResponseFrame.encode(alloc, headroom, streamId, follows, metadata, data);
      case FrameType.REQUEST_FNF:
        return RequestFnfFrame.encode(alloc, headroom, streamId, follows, metadata, data);
      case FrameType.REQUEST_STREAM:
        return RequestStreamFrame.encode(
            alloc, headroom, streamId, follows, initialRequestN, metadata, data);
      case FrameType.REQUEST_CHANNEL:
        return RequestChannelFrame.encode(
            alloc, headroom, streamId, follows, complete, initialRequestN, metadata, data);
      default:
        throw new IllegalArgumentException("not a request type: " + FrameType.name(type));
    }
  }

  private void fragment(
      int type,
      int streamId,
      int extra,
      int lastFlags,
      long initialRequestN,
      ByteBuf metadata,
      ByteBuf data) {
    int metadataIndex = metadata == null ? 0 : metadata.readerIndex();
    int metadataLeft = metadata == null ? 0 : metadata.readableBytes();
    int dataIndex = data == null ? 0 : data.readerIndex();
    int dataLeft = data == null ? 0 : data.readableBytes();
    boolean first = true;
    while (true) {
      int room = frameLimit - FrameHeader.SIZE - (first ? extra : 0);
      ByteBuf metadataPart = null;
      if (metadataLeft > 0 || first && metadata != null) {
        int take = Math.max(0, Math.min(metadataLeft, room - 3));
        metadataPart = metadata.slice(metadataIndex, take);
        metadataIndex += take;
        metadataLeft -= take;
        room -= 3 + take;
      }
      ByteBuf dataPart = null;
      if (metadataLeft == 0 && dataLeft > 0 && room > 0) {
        int take = Math.min(dataLeft, room);
        dataPart = data.slice(dataIndex, take);
        dataIndex += take;
        dataLeft -= take;
      }
      boolean last = metadataLeft == 0 && dataLeft == 0;
      if (first) {
        if (type == FrameType.PAYLOAD) {
          int flags = (lastFlags & FrameHeader.FLAG_NEXT) | FrameHeader.FLAG_FOLLOWS;
          write(PayloadFrame.encode(alloc, headroom, streamId, flags, metadataPart, dataPart));
        } else {
          write(encodeFirst(type, streamId, true, false, initialRequestN, metadataPart, dataPart));
        }
        first = false;
      } else {
        int flags =
            FrameHeader.FLAG_NEXT
                | (last ? lastFlags & FrameHeader.FLAG_COMPLETE : FrameHeader.FLAG_FOLLOWS);
        write(PayloadFrame.encode(alloc, headroom, streamId, flags, metadataPart, dataPart));
      }
      if (last) {
        return;
      }
    }
  }

  /**
   * Fails before the first fragment is written when a buffer is already released: a fragmented
   * message must go out whole or not at all.
   */
  private static void checkReadable(ByteBuf metadata, ByteBuf data) {
    if (metadata != null && metadata.refCnt() == 0 || data != null && data.refCnt() == 0) {
      throw new IllegalReferenceCountException("payload buffer already released");
    }
  }

  /**
   * Releases the caller's buffers. One that is already released (an application bug that made the
   * encoding fail) is left alone, so the original failure is what the caller sees.
   */
  private static void release(ByteBuf metadata, ByteBuf data) {
    try {
      releaseIfLive(metadata);
    } finally {
      releaseIfLive(data); // even when the metadata was a lent buffer, which refuses release()
    }
  }

  private static void releaseIfLive(ByteBuf buf) {
    if (buf == null) {
      return;
    }
    try {
      buf.release(); // no refCnt() read first: on the per-message path the buffer is live
    } catch (IllegalReferenceCountException alreadyReleased) {
      // the application's bug, reported by the failed encoding
    }
  }
}
