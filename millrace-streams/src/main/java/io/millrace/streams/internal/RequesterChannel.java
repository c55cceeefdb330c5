package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.Stream;
import io.millrace.frame.ErrorCode;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;
import org.reactivestreams.Publisher;

/**
 * A request-channel from this side. On the first demand for the responder's payloads it subscribes
 * to the payloads to send, on the event loop; the first one opens the channel (REQUEST_CHANNEL),
 * the rest follow the responder's credit. Cancelling the inbound Publisher ends the whole channel,
 * as a requester's CANCEL does.
 */
public final class RequesterChannel extends InboundPublisher {
  private final Connection connection;
  private final Publisher<Payload> outbound;
  private final Sink sink;

  public RequesterChannel(
      Connection connection, StreamsOptions options, Publisher<Payload> outbound) {
    super(connection.executor(), options);
    this.connection = connection;
    this.outbound = outbound;
    this.sink = new Sink(options.prefetch());
  }

  private final class Sink extends OutboundSink {
    Sink(long prefetch) {
      super(RequesterChannel.this.loop, null, prefetch);
    }

    @Override
    protected void open(Payload first) {
      Stream s =
          connection.requestChannel(
              first.metadata(), first.data(), initialCredit(), false, RequesterChannel.this);
      stream = s;
      RequesterChannel.this.stream = s;
    }

    @Override
    protected void finished(Stream s, Throwable error) {
      if (error != null) {
        inboundEnded(error); // the ERROR this side sent ended the whole channel
      }
    }

    @Override
    protected void endedUnopened(Throwable error) {
      inboundEnded(
          error != null
              ? error
              : new IllegalArgumentException(
                  "request-channel: the payloads to send completed without a first one"));
    }
  }

  @Override
  protected void start() {
    outbound.subscribe(sink); // on the loop
  }

  @Override
  protected void cancelled(boolean inboundDone) {
    sink.stop(); // a requester's CANCEL ends its outbound half too
    Stream s = stream;
    if (inboundDone && s != null && !s.isOutboundDone()) {
      // No CANCEL can follow the responder's end: end this side's half with an error instead.
      s.error(ErrorCode.CANCELED, "the requester cancelled");
    }
  }

  /**
   * Ends the whole channel from this side, its sending half too, even when the responses have
   * already ended (then a plain {@link #cancel}, a no-op after the end by the Reactive Streams
   * rules, would leave the sending half open): the observer flavour's cancel of a call. Any thread.
   */
  public void cancelCall() {
    cancel();
    try {
      loop.execute(
          () -> {
            sink.stop();
            Stream s = stream;
            if (s != null && s.isInboundDone() && !s.isOutboundDone()) {
              s.error(ErrorCode.CANCELED, "the requester cancelled");
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // The loop is gone, and the connection with it.
    }
  }

  @Override
  public void onError(Stream s, int errorCode, String message) {
    super.onError(s, errorCode, message);
    sink.stop();
  }

  @Override
  public void onReady(Stream s) {
    sink.onReady(s);
  }

  @Override
  public void onCancel(Stream s) {
    sink.stop(); // the responder stopped reading; its payloads may still come
  }
}
