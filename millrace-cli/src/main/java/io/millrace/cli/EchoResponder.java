package io.millrace.cli;

import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;

/**
 * The echo server's fixed semantics, used for interop checks and demos.
 *
 * <ul>
 *   <li>request-response echoes data and metadata; data starting with {@code error:} gets
 *       APPLICATION_ERROR with the rest as its message;
 *   <li>fire-and-forget and metadata push are ignored;
 *   <li>request-stream reads the data as a decimal N and sends N payloads with data "0".."N-1" and
 *       the request's metadata, as fast as the requester's credit and the transport allow, then
 *       completes; other data gets APPLICATION_ERROR;
 *   <li>request-channel echoes every inbound payload, the first included, and completes when the
 *       requester completes.
 * </ul>
 *
 * Memory per stream is bounded: a channel asks the requester for no more payloads than the
 * requester has granted it credit to echo, at most {@link #CHANNEL_WINDOW} at a time, and stops
 * asking while {@link #CHANNEL_MAX_PENDING_BYTES} wait to be echoed, so a requester that does not
 * read or does not grant credit makes it stop asking.
 */
public final class EchoResponder implements Responder {
  static final String ERROR_PREFIX = "error:";

  /** Inbound payloads a channel asks for ahead of echoing them. */
  static final int CHANNEL_WINDOW = 256;

  /** Bytes of inbound payloads a channel holds before it stops asking for more. */
  static final int CHANNEL_MAX_PENDING_BYTES = 1 << 20;

  @Override
  public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    String error = errorMessage(data);
    if (error != null) {
      stream.error(ErrorCode.APPLICATION_ERROR, error);
    } else {
      stream.next(kept(metadata), data.retainedSlice());
    }
    return null;
  }

  @Override
  public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    long count;
    try {
      count = Long.parseLong(data.toString(StandardCharsets.UTF_8).trim());
      if (count < 0) {
        throw new NumberFormatException("negative");
      }
    } catch (NumberFormatException e) {
      stream.error(
          ErrorCode.APPLICATION_ERROR,
          "request-stream data must be a decimal count, got '" + quote(data) + "'");
      return null;
    }
    // The request's metadata is borrowed: copy it, since every payload of the stream repeats it.
    CountingStream producer = new CountingStream(count, metadata == null ? null : metadata.copy());
    return producer; // the engine calls onReady at once while the stream has credit
  }

  @Override
  public StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    ChannelEcho echo = new ChannelEcho(inboundComplete);
    echo.onNext(stream, metadata, data);
    if (inboundComplete) {
      echo.onComplete(stream);
    }
    return echo;
  }

  @Override
  public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {}

  @Override
  public void metadataPush(Connection connection, ByteBuf metadata) {}

  private static String errorMessage(ByteBuf data) {
    int prefix = ERROR_PREFIX.length();
    if (data.readableBytes() < prefix) {
      return null;
    }
    for (int i = 0; i < prefix; i++) {
      if (data.getByte(data.readerIndex() + i) != ERROR_PREFIX.charAt(i)) {
        return null;
      }
    }
    return data.toString(
        data.readerIndex() + prefix, data.readableBytes() - prefix, StandardCharsets.UTF_8);
  }

  /** At most the first 64 bytes of {@code data}, for error messages. */
  private static String quote(ByteBuf data) {
    int length = Math.min(64, data.readableBytes());
    String text = data.toString(data.readerIndex(), length, StandardCharsets.UTF_8);
    return length < data.readableBytes() ? text + "..." : text;
  }

  /** A view of a lent buffer that this side owns (null stays null). */
  private static ByteBuf kept(ByteBuf buf) {
    return buf == null ? null : buf.retainedSlice();
  }

  /** Sends "0".."count-1" while the stream is ready. */
  private static final class CountingStream implements StreamListener {
    private final long count;
    private ByteBuf metadata;
    private long sent;
    private boolean done;

    CountingStream(long count, ByteBuf metadata) {
      this.count = count;
      this.metadata = metadata;
    }

    @Override
    public void onReady(Stream stream) {
      if (done) {
        return;
      }
      while (sent < count && stream.isReady()) {
        ByteBuf data = ByteBufUtil.writeAscii(stream.connection().alloc(), Long.toString(sent));
        sent++;
        if (sent == count) {
          done = true;
          stream.nextAndComplete(metadata, data);
          metadata = null;
          return;
        }
        stream.next(metadata == null ? null : metadata.retainedDuplicate(), data);
      }
      if (sent == count) {
        done = true;
        stream.complete();
        release();
      }
    }

    @Override
    public void onCancel(Stream stream) {
      release();
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      release();
    }

    private void release() {
      if (metadata != null) {
        metadata.release();
        metadata = null;
      }
    }
  }

  /**
   * Echoes a channel's inbound payloads, keeping at most {@link #CHANNEL_WINDOW} of them waiting
   * for outbound credit.
   */
  private static final class ChannelEcho implements StreamListener {
    private final ArrayDeque<ByteBuf[]> pending = new ArrayDeque<>();
    private long pendingBytes;
    private boolean inboundComplete;
    private long requested;

    ChannelEcho(boolean inboundComplete) {
      this.inboundComplete = inboundComplete;
    }

    @Override
    public void onNext(Stream stream, ByteBuf metadata, ByteBuf data) {
      if (requested > 0) {
        requested--;
      }
      if (pending.isEmpty() && stream.isReady()) {
        stream.next(kept(metadata), data.retainedSlice());
      } else {
        pending.add(new ByteBuf[] {kept(metadata), data.retainedSlice()});
        pendingBytes += size(metadata, data);
      }
      drainAndRequest(stream);
    }

    @Override
    public void onComplete(Stream stream) {
      inboundComplete = true;
      drainAndRequest(stream);
    }

    @Override
    public void onReady(Stream stream) {
      drainAndRequest(stream);
    }

    @Override
    public void onCancel(Stream stream) {
      releasePending();
      stream.cancel();
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      releasePending();
    }

    private void drainAndRequest(Stream stream) {
      while (!pending.isEmpty() && stream.isReady()) {
        ByteBuf[] payload = pending.poll();
        pendingBytes -= size(payload[0], payload[1]);
        stream.next(payload[0], payload[1]);
      }
      if (inboundComplete) {
        if (pending.isEmpty()) {
          stream.complete();
        }
        return;
      }
      if (pendingBytes >= CHANNEL_MAX_PENDING_BYTES) {
        return;
      }
      long want = Math.min(CHANNEL_WINDOW, stream.credit()) - pending.size() - requested;
      if (want > 0 && (want >= CHANNEL_WINDOW / 2 || requested == 0)) {
        requested += want;
        stream.request(want);
      }
    }

    private static long size(ByteBuf metadata, ByteBuf data) {
      return (metadata == null ? 0 : metadata.readableBytes()) + data.readableBytes();
    }

    private void releasePending() {
      ByteBuf[] payload;
      pendingBytes = 0;
      while ((payload = pending.poll()) != null) {
        if (payload[0] != null) {
          payload[0].release();
        }
        payload[1].release();
      }
    }
  }
}
