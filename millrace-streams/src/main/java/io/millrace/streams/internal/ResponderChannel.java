package io.millrace.streams.internal;

import io.millrace.core.Stream;
import io.millrace.core.StreamErrorException;
import io.millrace.core.StreamListener;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import org.reactivestreams.Publisher;

/**
 * A request-channel a peer opened: the requester's further payloads as a Publisher (its demand
 * becomes this side's REQUEST_N), and a sink for the handler's answer. Cancelling the inbound
 * Publisher stops only the inbound half, as a responder's CANCEL does; when the answer ends and
 * nobody subscribed to the inbound payloads, they are cancelled so that the stream ends.
 */
public final class ResponderChannel implements StreamListener {
  private final Inbound inbound;
  private final Sink sink;

  public ResponderChannel(Stream stream, StreamsOptions options, boolean inboundComplete) {
    this.inbound = new Inbound(stream, options, inboundComplete);
    this.sink = new Sink(stream, options.prefetch());
  }

  /** The requester's payloads after the first. */
  public Publisher<Payload> inbound() {
    return inbound;
  }

  /** What the handler's answer is subscribed with. */
  public OutboundSink sink() {
    return sink;
  }

  private static final class Inbound extends InboundPublisher {
    private final boolean completeAtOnce;

    Inbound(Stream stream, StreamsOptions options, boolean inboundComplete) {
      super(stream.connection().executor(), options);
      this.stream = stream;
      this.completeAtOnce = inboundComplete;
    }

    @Override
    protected void discard() {
      if (!stream.isInboundDone()) {
        stream.cancel(); // cancelled before asking for anything: end the requester's half
      }
    }

    @Override
    protected void start() {
      if (completeAtOnce) {
        inboundEnded(null);
      } else {
        stream.request(initialCredit());
      }
    }
  }

  private final class Sink extends OutboundSink {
    Sink(Stream stream, long prefetch) {
      super(stream.connection().executor(), stream, prefetch);
    }

    @Override
    protected void failedOnWrite(Stream s) {
      // The stream failed both ways, and the listener that would tell the inbound half was not
      // yet the stream's: its subscriber hears it here.
      inbound.inboundEnded(
          StreamErrorException.received(
              ErrorCode.APPLICATION_ERROR, "the answer could not be sent: the stream failed"));
    }

    @Override
    protected void finished(Stream s, Throwable error) {
      if (error != null) {
        inbound.inboundEnded(error); // the ERROR ended the requester's half too
      } else if (!inbound.isSubscribed() && !s.isInboundDone()) {
        s.cancel(); // nobody will read the requester's payloads: let the stream end
        // A subscriber that still comes (from another thread) learns that they are gone.
        inbound.inboundEnded(
            StreamErrorException.received(
                ErrorCode.CANCELED, "the answer ended before the payloads were read"));
      }
    }
  }

  @Override
  public void onNext(Stream s, ByteBuf metadata, ByteBuf data) {
    inbound.onNext(s, metadata, data);
  }

  @Override
  public void onComplete(Stream s) {
    inbound.onComplete(s);
  }

  @Override
  public void onError(Stream s, int errorCode, String message) {
    inbound.onError(s, errorCode, message);
    sink.stop();
  }

  @Override
  public void onReady(Stream s) {
    sink.onReady(s);
  }

  @Override
  public void onCancel(Stream s) {
    sink.stop();
    inbound.inboundEnded(
        StreamErrorException.received(ErrorCode.CANCELED, "the requester cancelled"));
  }
}
