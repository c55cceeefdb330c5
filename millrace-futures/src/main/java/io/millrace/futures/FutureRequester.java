package io.millrace.futures;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.futures.internal.FutureSubscriber;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import java.util.concurrent.CompletableFuture;

/**
 * Request-response and fire-and-forget as {@link CompletableFuture}s: the call is made at once.
 *
 * <p>A request-response future completes with the answer (null when the responder completed without
 * one) or exceptionally with a {@link io.millrace.core.StreamErrorException} carrying the code;
 * cancelling it sends CANCEL. Futures complete on the connection's event loop, so the non-async
 * dependents ({@code thenApply}, {@code whenComplete}) run there too: keep them short, or use the
 * {@code *Async} variants with an executor for blocking work.
 *
 * <p>The payload sent belongs to Millrace; the answer belongs to the caller (a heap copy by
 * default: no release needed). Any thread may call.
 */
public final class FutureRequester {
  static {
    Signatures.resolve(
        FutureRequester.class,
        FutureSubscriber.class); // so that C2 may inline calls to their methods
  }

  private final ReactiveRequester requester;

  private FutureRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static FutureRequester of(Connection connection) {
    return new FutureRequester(ReactiveRequester.of(connection));
  }

  public static FutureRequester of(Connection connection, StreamsOptions options) {
    return new FutureRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  public CompletableFuture<Payload> requestResponse(Payload payload) {
    FutureSubscriber<Payload> answer = new FutureSubscriber<>();
    requester.requestResponse(payload).subscribe(answer);
    return answer;
  }

  /** Completes once the payload is handed to the connection (there is no answer). */
  public CompletableFuture<Void> fireAndForget(Payload payload) {
    FutureSubscriber<Void> sent = new FutureSubscriber<>();
    requester.fireAndForget(payload).subscribe(sent);
    return sent;
  }

  /**
   * Sends connection-level metadata (ownership taken); completes once it is handed to the
   * connection, which drops it (released) if it is closing: completion does not say it was sent.
   */
  public CompletableFuture<Void> metadataPush(ByteBuf metadata) {
    FutureSubscriber<Void> sent = new FutureSubscriber<>();
    requester.metadataPush(metadata).subscribe(sent);
    return sent;
  }
}
