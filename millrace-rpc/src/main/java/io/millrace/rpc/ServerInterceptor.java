package io.millrace.rpc;

import org.reactivestreams.Publisher;

/**
 * Runs around every call a server serves: authentication, logging, metrics. Interceptors run in the
 * order they were added to the server, the first outermost.
 *
 * <pre>{@code
 * ServerInterceptor auth = new ServerInterceptor() {
 *   public void onCall(ServerContext call) {
 *     if (!tokens.valid(call.requestHeaders().get("authorization"))) {
 *       throw Status.of(Status.Code.UNAUTHENTICATED).asException();
 *     }
 *   }
 * };
 * }</pre>
 */
public interface ServerInterceptor {
  /**
   * Called before the handler, on the thread that calls it: the event loop, or the server's handler
   * executor. (A StreamObserver server-streaming or bidirectional handler on a server without one
   * then runs on the shared stream-handler executor, so what {@code onCall} keeps in thread-locals
   * does not reach it: give the handler values with {@link ServerContext#put}, which it reads from
   * its context wherever it runs.) Throw (a {@link StatusException} for a chosen status) to refuse
   * the call: the handler does not run. May set response headers and trailers and register {@link
   * ServerContext#onCancel} hooks.
   */
  default void onCall(ServerContext call) {}

  /**
   * Wraps the handler's responses, to observe them, their end or their timing; returns {@code
   * responses} itself when it has nothing to add. The Publisher returned is what the caller gets.
   */
  default <Resp> Publisher<Resp> onResponses(ServerContext call, Publisher<Resp> responses) {
    return responses;
  }
}
