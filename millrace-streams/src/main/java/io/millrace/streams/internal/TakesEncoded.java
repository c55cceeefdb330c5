package io.millrace.streams.internal;

import io.millrace.core.PayloadEncoder;
import io.netty.buffer.ByteBuf;

/**
 * A Subscriber of payloads that also takes an {@linkplain io.millrace.streams.Payload#encoded
 * encoded} item as its parts: the metadata, the value and the encoder that writes the value into
 * the frame. A Publisher that makes its items that way (the RPC layer's responses and a channel's
 * requests) calls {@link #onNextEncoded} instead of {@code onNext}, and no payload is made for an
 * item that goes straight out on the event loop, nor for one that waits without metadata (it waits
 * as itself); any other that has to wait is made a payload then.
 *
 * <p>The streams layer's own sinks implement it ({@link OutboundSink}). Only a Publisher subscribed
 * by one of them, which therefore knows the subscriber is Millrace's, calls it.
 */
public interface TakesEncoded {

  /**
   * As {@code onNext(Payload.encoded(metadata, value, encoder))}, with the same Reactive Streams
   * rules: within the demand signalled, serially with the other signals. {@code metadata} (null for
   * none) is taken over; {@code value} must not change afterwards.
   */
  <T> void onNextEncoded(ByteBuf metadata, T value, PayloadEncoder<? super T> encoder);
}
