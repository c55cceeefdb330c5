package io.millrace.streams;

import static java.util.Objects.requireNonNull;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.streams.internal.AnswerPublisher;
import io.millrace.streams.internal.Deferred;
import io.millrace.streams.internal.FireAndForgetPublisher;
import io.millrace.streams.internal.InboundPublisher;
import io.millrace.streams.internal.RequestPublisher;
import io.millrace.streams.internal.RequesterChannel;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;

/**
 * Starts requests on a {@link Connection} as Reactive Streams Publishers.
 *
 * <p>Each method returns a Publisher for one call: nothing is sent until it is subscribed (and, for
 * the interactions that answer, until the subscriber requests), and it takes one subscriber. The
 * payload given belongs to Millrace from the call on; a Publisher that is never subscribed keeps it
 * (pooled buffers in it are then never released). The overloads that take a {@code Supplier} make a
 * payload, and a call, for each subscriber: use them with retry or repeat.
 *
 * <p>Demand is credit: a subscriber's request(n) becomes REQUEST_N, batched by {@link
 * StreamsOptions#prefetch()}; cancel() becomes CANCEL; an ERROR becomes onError with a {@link
 * io.millrace.core.StreamErrorException} carrying the code. Every signal comes on the connection's
 * event loop; the subscriber may call back from any thread.
 *
 * <p>Received payloads belong to the subscriber and by default need no release (see {@link
 * Payload}).
 */
public final class ReactiveRequester {
  static {
    Signatures.resolve(
        ReactiveRequester.class,
        AnswerPublisher.class,
        RequestPublisher.class,
        RequesterChannel.class,
        FireAndForgetPublisher.class,
        InboundPublisher.class); // so that C2 may inline calls to their methods
  }

  private final Connection connection;
  private final StreamsOptions options;

  private ReactiveRequester(Connection connection, StreamsOptions options) {
    this.connection = connection;
    this.options = options;
  }

  public static ReactiveRequester of(Connection connection) {
    return new ReactiveRequester(connection, StreamsOptions.DEFAULT);
  }

  public static ReactiveRequester of(Connection connection, StreamsOptions options) {
    return new ReactiveRequester(connection, options);
  }

  public Connection connection() {
    return connection;
  }

  public StreamsOptions options() {
    return options;
  }

  /** Sends {@code payload} once subscribed; completes once it is handed to the connection. */
  public Publisher<Void> fireAndForget(Payload payload) {
    return FireAndForgetPublisher.fireAndForget(connection, requireNonNull(payload, "payload"));
  }

  /**
   * As {@link #fireAndForget(Payload)}, with a payload made for each subscriber: the Publisher may
   * be subscribed again (retry, repeat), each time a new send.
   */
  public Publisher<Void> fireAndForget(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return new Deferred<>(() -> fireAndForget(payload.get()));
  }

  /** Sends connection-level metadata once subscribed (ownership taken). */
  public Publisher<Void> metadataPush(ByteBuf metadata) {
    return FireAndForgetPublisher.metadataPush(
        connection, Payload.of(requireNonNull(metadata, "metadata"), Unpooled.EMPTY_BUFFER));
  }

  /**
   * One response, an empty completion (the responder completed without one), or an error; sent on
   * the first request.
   */
  public Publisher<Payload> requestResponse(Payload payload) {
    return AnswerPublisher.of(connection, options, requireNonNull(payload, "payload"));
  }

  /**
   * As {@link #requestResponse(Payload)}, with a payload made for each subscriber: the Publisher
   * may be subscribed again (retry, repeat), each time a new call.
   */
  public Publisher<Payload> requestResponse(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return new Deferred<>(() -> requestResponse(payload.get()));
  }

  /** The responder's stream; sent on the first request. */
  public Publisher<Payload> requestStream(Payload payload) {
    return RequestPublisher.requestStream(connection, options, requireNonNull(payload, "payload"));
  }

  /**
   * As {@link #requestStream(Payload)}, with a payload made for each subscriber: the Publisher may
   * be subscribed again (retry, repeat), each time a new call.
   */
  public Publisher<Payload> requestStream(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return new Deferred<>(() -> requestStream(payload.get()));
  }

  /**
   * A channel: on the first request {@code payloads} is subscribed on the event loop; its first
   * payload opens the channel and the rest are sent as the responder grants credit. The returned
   * Publisher carries the responder's payloads; cancelling it ends the whole channel. If {@code
   * payloads} completes without a first payload, the result fails with IllegalArgumentException.
   * Each subscriber of the returned Publisher opens its own channel, subscribing {@code payloads}
   * again (retry works when {@code payloads} can be subscribed more than once).
   */
  public Publisher<Payload> requestChannel(Publisher<Payload> payloads) {
    requireNonNull(payloads, "payloads");
    return new Deferred<>(() -> new RequesterChannel(connection, options, payloads));
  }
}
