package io.millrace.futures;

import io.millrace.core.StreamErrorException;
import io.millrace.streams.Payload;
import java.util.concurrent.CompletionStage;

/**
 * Answers request-response with a {@link CompletionStage} and takes fire-and-forget; {@link
 * FutureResponder#of} serves it. Streams and channels are rejected (a reactive flavour or the
 * StreamObserver flavour serves them).
 *
 * <p>A stage that completes with null sends an empty answer; one that fails with a {@link
 * StreamErrorException} sends its code and message, any other failure or a thrown exception
 * APPLICATION_ERROR with a fixed text (see {@link
 * io.millrace.core.ConnectionConfig#errorMessagesFromHandlers()}). A peer's CANCEL cancels the
 * stage when it is a CompletableFuture. Methods run on the event loop unless {@link
 * io.millrace.streams.StreamsOptions#handlerExecutor()} is set: to block (a database call, say)
 * give a virtual-thread executor and return {@code CompletableFuture.completedFuture(answer)}.
 *
 * <p>The request payload belongs to the method (a heap copy by default: no release needed); the
 * answer belongs to Millrace once the stage takes it. A CompletableFuture that a peer's CANCEL
 * cancelled first takes nothing: its {@code complete(answer)} returns false and the answer stays
 * the method's (a heap answer needs nothing; release a pooled one when {@code complete} says
 * false).
 */
@FunctionalInterface
public interface FutureHandler {

  /** The answer; null as the stage's value sends an empty answer, a null stage fails the call. */
  CompletionStage<Payload> requestResponse(Payload payload);

  /** A thrown exception is logged. */
  default void fireAndForget(Payload payload) {
    payload.release();
  }

  /** Connection-level metadata, in {@link Payload#metadata()}. */
  default void metadataPush(Payload payload) {
    payload.release();
  }
}
