package io.millrace.mutiny;

import static java.util.Objects.requireNonNull;
import static mutiny.zero.flow.adapters.AdaptersToFlow.publisher;
import static mutiny.zero.flow.adapters.AdaptersToReactiveStreams.publisher;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.mutiny.internal.AnswerUni;
import io.millrace.mutiny.internal.SendUni;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import java.util.concurrent.Flow;
import java.util.function.Supplier;

/**
 * Starts requests on a {@link Connection} as Mutiny {@link Uni}s and {@link Multi}s.
 *
 * <p>Each call is lazy: nothing is sent until it is subscribed and, for the interactions that
 * answer, requested from. A Multi's downstream demand becomes REQUEST_N, batched by {@link
 * StreamsOptions#prefetch()}; cancelling sends CANCEL; an ERROR frame arrives as a {@link
 * io.millrace.core.StreamErrorException} carrying the code.
 *
 * <p>The forms that take a {@link Payload} are one call each, with one subscriber. The forms that
 * take a {@code Supplier} make a payload, and a call, per subscriber: use them with {@code
 * onFailure().retry()} and {@code repeat()}.
 *
 * <p>Events come on the connection's event loop: do not block in them ({@code emitOn} moves work
 * elsewhere). Received payloads are heap copies by default and need no release.
 */
public final class MutinyRequester {
  static {
    Signatures.resolve(
        MutinyRequester.class,
        AnswerUni.class,
        SendUni.class); // so that C2 may inline calls to their methods
  }

  private final ReactiveRequester requester;

  private MutinyRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static MutinyRequester of(Connection connection) {
    return new MutinyRequester(ReactiveRequester.of(connection));
  }

  public static MutinyRequester of(Connection connection, StreamsOptions options) {
    return new MutinyRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  /** Emits null once the payload is handed to the connection. */
  public Uni<Void> fireAndForget(Payload payload) {
    return SendUni.of(connection(), requireNonNull(payload, "payload"), false);
  }

  public Uni<Void> fireAndForget(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return Uni.createFrom().deferred(() -> fireAndForget(payload.get()));
  }

  /** Connection-level metadata (ownership taken); emits null once handed to the connection. */
  public Uni<Void> metadataPush(ByteBuf metadata) {
    return SendUni.of(
        connection(),
        Payload.of(requireNonNull(metadata, "metadata"), Unpooled.EMPTY_BUFFER),
        true);
  }

  /** The response; null when the responder completed without one. */
  public Uni<Payload> requestResponse(Payload payload) {
    return AnswerUni.of(requester.requestResponse(payload));
  }

  public Uni<Payload> requestResponse(Supplier<Payload> payload) {
    requireNonNull(payload, "payload");
    return Uni.createFrom().deferred(() -> requestResponse(payload.get()));
  }

  public Multi<Payload> requestStream(Payload payload) {
    return Multi.createFrom().publisher(publisher(requester.requestStream(payload)));
  }

  public Multi<Payload> requestStream(Supplier<Payload> payload) {
    return Multi.createFrom().publisher(publisher(requester.requestStream(payload)));
  }

  /**
   * A channel opened by the first payload of {@code payloads} (a {@link Multi}, say); the rest are
   * sent as the responder grants credit. Cancelling the returned Multi ends the whole channel; each
   * subscriber opens its own channel and subscribes {@code payloads} again.
   */
  public Multi<Payload> requestChannel(Flow.Publisher<Payload> payloads) {
    return Multi.createFrom().publisher(publisher(requester.requestChannel(publisher(payloads))));
  }
}
