package io.millrace.interop;

import io.millrace.cli.EchoResponder;
import io.millrace.core.Connection;
import io.millrace.core.Responder;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedTransferQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Millrace's {@link EchoResponder} for the request interactions, plus what the echo cannot show:
 * fire-and-forget and metadata push are recorded, request-stream records the largest credit the
 * requester ever granted, and request-stream with data {@code forever} streams without end while
 * credit lasts and records its cancel.
 */
final class RecordingResponder implements Responder {
  static final String FOREVER = "forever";

  final BlockingQueue<Received> fireAndForgets = new LinkedTransferQueue<>();
  final BlockingQueue<String> metadataPushes = new LinkedTransferQueue<>();
  final AtomicInteger requestResponses = new AtomicInteger();
  final AtomicLong maxStreamCredit = new AtomicLong();
  final AtomicInteger foreverSent = new AtomicInteger();
  final CountDownLatch foreverCancelled = new CountDownLatch(1);

  private final EchoResponder echo = new EchoResponder();

  @Override
  public void fireAndForget(Connection connection, ByteBuf metadata, ByteBuf data) {
    fireAndForgets.add(new Received(Interop.utf8(data), Interop.utf8(metadata)));
  }

  @Override
  public void metadataPush(Connection connection, ByteBuf metadata) {
    metadataPushes.add(Interop.utf8(metadata));
  }

  @Override
  public StreamListener requestResponse(Stream stream, ByteBuf metadata, ByteBuf data) {
    requestResponses.incrementAndGet();
    return echo.requestResponse(stream, metadata, data);
  }

  @Override
  public StreamListener requestStream(Stream stream, ByteBuf metadata, ByteBuf data) {
    observeCredit(stream);
    if (FOREVER.equals(Interop.utf8(data))) {
      Forever forever = new Forever();
      forever.onReady(stream);
      return forever;
    }
    StreamListener delegate = echo.requestStream(stream, metadata, data);
    return delegate == null ? null : new CreditObserver(delegate);
  }

  @Override
  public StreamListener requestChannel(
      Stream stream, ByteBuf metadata, ByteBuf data, boolean inboundComplete) {
    return echo.requestChannel(stream, metadata, data, inboundComplete);
  }

  private void observeCredit(Stream stream) {
    maxStreamCredit.accumulateAndGet(stream.credit(), Math::max);
  }

  /** Records the credit every time the requester grants more, then lets the echo send. */
  private final class CreditObserver implements StreamListener {
    private final StreamListener delegate;

    CreditObserver(StreamListener delegate) {
      this.delegate = delegate;
    }

    @Override
    public void onReady(Stream stream) {
      observeCredit(stream);
      delegate.onReady(stream);
    }

    @Override
    public void onCancel(Stream stream) {
      delegate.onCancel(stream);
    }

    @Override
    public void onError(Stream stream, int errorCode, String message) {
      delegate.onError(stream, errorCode, message);
    }
  }

  /** Sends "0", "1", ... while the stream is ready, never completing. */
  private final class Forever implements StreamListener {
    private long next;

    @Override
    public void onReady(Stream stream) {
      observeCredit(stream);
      while (stream.isReady()) {
        stream.next(null, ByteBufUtil.writeAscii(stream.connection().alloc(), Long.toString(next)));
        next++;
        foreverSent.incrementAndGet();
      }
    }

    @Override
    public void onCancel(Stream stream) {
      foreverCancelled.countDown();
    }
  }
}
