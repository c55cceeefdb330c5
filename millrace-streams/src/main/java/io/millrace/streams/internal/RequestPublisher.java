package io.millrace.streams.internal;

import io.millrace.core.Connection;
import io.millrace.core.internal.Failures;
import io.millrace.streams.Payload;
import io.millrace.streams.StreamsOptions;

/**
 * A request-stream from this side: the request goes out on the first demand, from the requesting
 * thread through the connection's hand-off (a burst of calls from one thread costs one wake-up of
 * the loop). A request-response is a {@link AnswerPublisher}.
 */
public final class RequestPublisher extends InboundPublisher {
  private final Connection connection;
  private Payload request;

  private RequestPublisher(Connection connection, StreamsOptions options, Payload request) {
    super(connection.executor(), options);
    this.connection = connection;
    this.request = request;
  }

  public static RequestPublisher requestStream(
      Connection connection, StreamsOptions options, Payload request) {
    return new RequestPublisher(connection, options, request);
  }

  @Override
  protected boolean startsOnCaller() {
    return true;
  }

  @Override
  protected void start() {
    Payload p = request;
    request = null;
    try {
      super.stream = p.requestStreamOn(connection, initialCredit(), this);
    } catch (Throwable e) {
      Failures.throwIfFatal(e);
      // Not sent: the hand-off queue is full, or an encoded payload's encoder failed on this
      // thread; the buffers were released. (A closed connection is told through onError.)
      startFailed(e);
    }
  }

  @Override
  protected void discard() {
    Payload p = request;
    request = null;
    if (p != null) {
      p.release();
    }
  }
}
