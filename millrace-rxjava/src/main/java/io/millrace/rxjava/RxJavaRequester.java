package io.millrace.rxjava;

import static java.util.Objects.requireNonNull;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.rxjava.internal.DirectAnswer;
import io.millrace.rxjava.internal.SendCompletable;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.reactivex.rxjava3.core.Completable;
import io.reactivex.rxjava3.core.Flowable;
import io.reactivex.rxjava3.core.Single;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;

/**
 * Starts requests on a {@link Connection} as RxJava 3 {@link Single}s, {@link Flowable}s and {@link
 * Completable}s.
 *
 * <p>Each call is lazy: nothing is sent until it is subscribed and, for the interactions that
 * answer, requested from. A Flowable's downstream demand becomes REQUEST_N, batched by {@link
 * StreamsOptions#prefetch()}; disposing sends CANCEL; an ERROR frame arrives as a {@link
 * io.millrace.core.StreamErrorException} carrying the code.
 *
 * <p>The forms that take a {@link Payload} are one call each, with one subscriber. The forms that
 * take a {@code Supplier} make a payload, and a call, per subscriber: use them with {@code retry()}
 * and {@code repeat()}.
 *
 * <p>Signals come on the connection's event loop: do not block in them ({@code observeOn} moves
 * work elsewhere). Received payloads are heap copies by default and need no release.
 */
public final class RxJavaRequester {
  static {
    Signatures.resolve(
        RxJavaRequester.class,
        SendCompletable.class,
        DirectAnswer.class); // so that C2 may inline calls to their methods
  }

  private final ReactiveRequester requester;

  private RxJavaRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static RxJavaRequester of(Connection connection) {
    return new RxJavaRequester(ReactiveRequester.of(connection));
  }

  public static RxJavaRequester of(Connection connection, StreamsOptions options) {
    return new RxJavaRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  /** Completes once the payload is handed to the connection. */
  public Completable fireAndForget(Payload payload) {
    return SendCompletable.of(connection(), requireNonNull(payload, "payload"), false);
  }

  public Completable fireAndForget(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return Completable.defer(() -> fireAndForget(payload.get()));
  }

  /** Connection-level metadata (ownership taken); completes once handed to the connection. */
  public Completable metadataPush(ByteBuf metadata) {
    return SendCompletable.of(
        connection(),
        Payload.of(requireNonNull(metadata, "metadata"), Unpooled.EMPTY_BUFFER),
        true);
  }

  /**
   * The response. A responder that completes without one (RSocket allows it; a Reactor responder's
   * empty Mono does it) gives {@link Payload#empty()}, since a Single must have an item.
   */
  public Single<Payload> requestResponse(Payload payload) {
    return single(requester.requestResponse(payload));
  }

  public Single<Payload> requestResponse(Supplier<Payload> payload) {
    return single(requester.requestResponse(payload));
  }

  public Flowable<Payload> requestStream(Payload payload) {
    return Flowable.fromPublisher(requester.requestStream(payload));
  }

  public Flowable<Payload> requestStream(Supplier<Payload> payload) {
    return Flowable.fromPublisher(requester.requestStream(payload));
  }

  /**
   * A channel opened by the first payload of {@code payloads}; the rest are sent as the responder
   * grants credit. Disposing the returned Flowable ends the whole channel; each subscriber opens
   * its own channel and subscribes {@code payloads} again.
   */
  public Flowable<Payload> requestChannel(Publisher<Payload> payloads) {
    return Flowable.fromPublisher(
        requester.requestChannel(DirectAnswer.of(Flowable.fromPublisher(payloads))));
  }

  private static Single<Payload> single(Publisher<Payload> response) {
    return Flowable.fromPublisher(response).single(EMPTY);
  }

  /** Never released by anyone that matters: its buffers are the shared empty one. */
  private static final Payload EMPTY = Payload.empty();
}
