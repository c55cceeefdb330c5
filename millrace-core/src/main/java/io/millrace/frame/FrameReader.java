package io.millrace.frame;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Validates one frame and calls the matching {@link FrameListener} method.
 *
 * <p>The frame is a buffer holding exactly one frame without its transport length prefix. The
 * reader checks every length against the frame before slicing, so a hostile peer can make it throw
 * {@link FrameFormatException} but never read past the frame. It neither retains nor releases the
 * frame; see {@link FrameListener} for the buffers it hands out.
 *
 * <p>For request frames and PAYLOAD, whose data always runs to the end of the frame, the {@code
 * data} argument is the frame buffer itself with its reader index moved to the data: no object is
 * allocated per message. The metadata of those frames is a slice, or, when the frame is a {@link
 * LentFrameBuffer}, the view it lends (no object either). Every other argument is a slice.
 *
 * <p>Frames that the spec's "Handling the Unexpected" section says MUST be ignored because of where
 * they arrive are skipped here, before any other check: a stream frame (request, REQUEST_N, CANCEL,
 * PAYLOAD) on stream 0, and a connection frame (SETUP, LEASE, KEEPALIVE, METADATA_PUSH, RESUME,
 * RESUME_OK) on another stream. Unknown frame types with the ignore flag are skipped too; unknown
 * types without it go to {@link FrameListener#onUnknownFrame}, so that the receiver can answer with
 * an error on the stream concerned.
 *
 * <p>Stateless and allocation-free apart from the slices; safe to share between connections.
 */
public final class FrameReader {
  private FrameReader() {}

  /**
   * Decodes {@code frame} and dispatches it to {@code listener}.
   *
   * @return false when the frame was skipped: an unknown type with the ignore flag, or a frame on a
   *     stream id where the spec says to ignore it
   * @throws FrameFormatException when the frame is malformed
   */
  public static boolean read(ByteBuf frame, FrameListener listener) {
    int length = frame.readableBytes();
    if (length < FrameHeader.SIZE) {
      throw new FrameFormatException("frame shorter than its header: " + length + " bytes");
    }
    // Two reads for the whole header: each checked access costs on the per-frame path.
    int streamId = frame.getInt(frame.readerIndex()) & 0x7FFF_FFFF;
    int typeAndFlags = frame.getUnsignedShort(frame.readerIndex() + 4);
    int type = typeAndFlags >>> FrameHeader.TYPE_SHIFT;
    int flags = typeAndFlags & FrameHeader.FLAGS_MASK;
    switch (type) {
      case FrameType.REQUEST_RESPONSE:
      case FrameType.REQUEST_FNF:
        {
          if (streamId == 0) {
            return false; // misplaced: ignored (see the class comment)
          }
          ByteBuf metadata = splitPayload(frame, FrameHeader.SIZE, flags, type);
          listener.onRequest(type, streamId, flags, 0, metadata, frame);
          return true;
        }
      case FrameType.REQUEST_STREAM:
      case FrameType.REQUEST_CHANNEL:
        {
          if (streamId == 0) {
            return false;
          }
          requireLength(frame, RequestStreamFrame.PAYLOAD_OFFSET, type);
          int n = RequestStreamFrame.initialRequestN(frame);
          if (n == 0) {
            throw new FrameFormatException(FrameType.name(type) + " with initial request-n 0");
          }
          ByteBuf metadata = splitPayload(frame, RequestStreamFrame.PAYLOAD_OFFSET, flags, type);
          listener.onRequest(type, streamId, flags, n, metadata, frame);
          return true;
        }
      case FrameType.PAYLOAD:
        if (streamId == 0) {
          return false;
        }
        if ((flags & (FrameHeader.FLAG_NEXT | FrameHeader.FLAG_COMPLETE | FrameHeader.FLAG_FOLLOWS))
            == 0) {
          requirePayloadFits(frame, FrameHeader.SIZE, type); // a malformed length is reported first
          throw new FrameFormatException("PAYLOAD with neither NEXT nor COMPLETE");
        }
        {
          ByteBuf metadata = splitPayload(frame, FrameHeader.SIZE, flags, type);
          listener.onPayload(streamId, flags, metadata, frame);
          return true;
        }
      case FrameType.REQUEST_N:
        {
          if (streamId == 0) {
            return false;
          }
          requireLength(frame, FrameHeader.SIZE + 4, type);
          int n = RequestNFrame.requestN(frame);
          if (n == 0) {
            throw new FrameFormatException("REQUEST_N with n 0");
          }
          listener.onRequestN(streamId, n);
          return true;
        }
      case FrameType.CANCEL:
        if (streamId == 0) {
          return false;
        }
        listener.onCancel(streamId);
        return true;
      case FrameType.ERROR:
        requireLength(frame, ErrorFrame.DATA_OFFSET, type);
        listener.onError(streamId, ErrorFrame.errorCode(frame), ErrorFrame.message(frame));
        return true;
      case FrameType.KEEPALIVE:
        if (streamId != 0) {
          return false;
        }
        requireLength(frame, KeepAliveFrame.DATA_OFFSET, type);
        listener.onKeepAlive(
            KeepAliveFrame.respond(frame),
            KeepAliveFrame.lastReceivedPosition(frame),
            KeepAliveFrame.data(frame));
        return true;
      case FrameType.LEASE:
        if (streamId != 0) {
          return false;
        }
        requireLength(frame, LeaseFrame.METADATA_OFFSET, type);
        listener.onLease(
            LeaseFrame.ttl(frame) & 0x7FFF_FFFF,
            LeaseFrame.numberOfRequests(frame) & 0x7FFF_FFFF,
            LeaseFrame.metadata(frame));
        return true;
      case FrameType.METADATA_PUSH:
        if (streamId != 0) {
          return false;
        }
        listener.onMetadataPush(MetadataPushFrame.metadata(frame));
        return true;
      case FrameType.SETUP:
        if (streamId != 0) {
          return false;
        }
        readSetup(frame, flags, listener);
        return true;
      case FrameType.RESUME:
        if (streamId != 0) {
          return false;
        }
        requireLength(frame, ResumeFrame.TOKEN_LENGTH_OFFSET + 2, type);
        requireLength(frame, ResumeFrame.positionsOffset(frame) - frame.readerIndex() + 16, type);
        listener.onResume(
            ResumeFrame.majorVersion(frame),
            ResumeFrame.minorVersion(frame),
            ResumeFrame.token(frame),
            ResumeFrame.lastReceivedServerPosition(frame),
            ResumeFrame.firstAvailableClientPosition(frame));
        return true;
      case FrameType.RESUME_OK:
        if (streamId != 0) {
          return false;
        }
        requireLength(frame, FrameHeader.SIZE + 8, type);
        listener.onResumeOk(ResumeOkFrame.lastReceivedClientPosition(frame));
        return true;
      case FrameType.EXT:
        requirePayloadFits(frame, ExtFrame.PAYLOAD_OFFSET, type);
        listener.onExt(
            streamId,
            flags,
            ExtFrame.extendedType(frame),
            ExtFrame.metadata(frame),
            ExtFrame.data(frame));
        return true;
      default:
        if ((flags & FrameHeader.FLAG_IGNORE) != 0) {
          return false;
        }
        listener.onUnknownFrame(streamId, type, flags);
        return true;
    }
  }

  private static void readSetup(ByteBuf frame, int flags, FrameListener listener) {
    int base = frame.readerIndex();
    int end = frame.writerIndex();
    int offset = base + SetupFrame.VARIABLE_OFFSET;
    if (offset > end) {
      throw new FrameFormatException("SETUP too short");
    }
    ByteBuf token = null;
    if ((flags & FrameHeader.FLAG_RESUME) != 0) {
      offset = need(offset, 2, end);
      int tokenLength = frame.getUnsignedShort(offset - 2);
      offset = need(offset, tokenLength, end);
      token = frame.slice(offset - tokenLength, tokenLength);
    }
    offset = need(offset, 1, end);
    int metadataMimeLength = frame.getUnsignedByte(offset - 1);
    offset = need(offset, metadataMimeLength, end);
    String metadataMime =
        frame.toString(offset - metadataMimeLength, metadataMimeLength, StandardCharsets.US_ASCII);
    offset = need(offset, 1, end);
    int dataMimeLength = frame.getUnsignedByte(offset - 1);
    offset = need(offset, dataMimeLength, end);
    String dataMime =
        frame.toString(offset - dataMimeLength, dataMimeLength, StandardCharsets.US_ASCII);
    int payloadOffset = offset - base;
    requirePayloadFits(frame, payloadOffset, FrameType.SETUP);
    listener.onSetup(
        flags,
        SetupFrame.majorVersion(frame),
        SetupFrame.minorVersion(frame),
        SetupFrame.keepAliveInterval(frame),
        SetupFrame.maxLifetime(frame),
        token,
        metadataMime,
        dataMime,
        Frames.metadata(frame, payloadOffset),
        Frames.data(frame, payloadOffset));
  }

  private static int need(int offset, int count, int end) {
    if (offset + count > end) {
      throw new FrameFormatException("SETUP too short");
    }
    return offset + count;
  }

  private static void requireLength(ByteBuf frame, int length, int type) {
    if (frame.readableBytes() < length) {
      throw new FrameFormatException(FrameType.name(type) + " too short");
    }
  }

  /**
   * Splits a payload-bearing frame whose metadata section starts at {@code offset}, after checking
   * that its metadata length fits: returns the metadata (a slice, the frame's {@linkplain
   * LentFrameBuffer#lendSlice lent view}, or null without M) and moves the frame's reader index to
   * its data, so the frame itself is the data. One read of the metadata length, none without M.
   */
  private static ByteBuf splitPayload(ByteBuf frame, int offset, int flags, int type) {
    int length = frame.readableBytes();
    int start = frame.readerIndex() + offset;
    if (length < offset) {
      throw new FrameFormatException(FrameType.name(type) + " too short");
    }
    if ((flags & FrameHeader.FLAG_METADATA) == 0) {
      frame.readerIndex(start);
      return null;
    }
    int metadataLength = length >= offset + 3 ? frame.getUnsignedMedium(start) : -1;
    if (metadataLength < 0 || offset + 3 + metadataLength > length) {
      throw new FrameFormatException(FrameType.name(type) + " metadata length overruns the frame");
    }
    ByteBuf metadata =
        frame instanceof LentFrameBuffer
            ? ((LentFrameBuffer) frame).lendSlice(start + 3, metadataLength)
            : frame.slice(start + 3, metadataLength);
    frame.readerIndex(start + 3 + metadataLength);
    return metadata;
  }

  private static void requirePayloadFits(ByteBuf frame, int offset, int type) {
    if (!Frames.payloadFits(frame, offset)) {
      throw new FrameFormatException(FrameType.name(type) + " metadata length overruns the frame");
    }
  }
}
