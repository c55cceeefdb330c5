package io.millrace.streams.internal;

import io.millrace.core.StreamListener;
import io.millrace.streams.Payload;
import org.reactivestreams.Subscriber;

/**
 * What a responder subscribes its handler's answer with: a Subscriber that sends the payloads on
 * the request's stream, and the stream's listener. {@link AnswerSink} for a request-response,
 * {@link OutboundSink} for a stream or a channel.
 */
public interface ResponderSink extends Subscriber<Payload>, StreamListener {

  /**
   * Whether the sink stopped before its Publisher ended by itself: the stream's outbound half ended
   * from elsewhere (the peer's CANCEL or ERROR, the connection lost, a payload that could not be
   * sent) or the Publisher sent more than the call takes. An answer is then no longer wanted. Any
   * thread.
   */
  boolean isStopped();
}
