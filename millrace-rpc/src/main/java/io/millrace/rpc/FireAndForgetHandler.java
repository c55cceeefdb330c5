package io.millrace.rpc;

import org.reactivestreams.Publisher;

/**
 * Serves a fire-and-forget method: the returned Publisher (null: nothing to wait for) completes
 * when the work is done; nobody is told the outcome.
 */
@FunctionalInterface
public interface FireAndForgetHandler<Req> {
  Publisher<Void> handle(Req request, ServerContext context);
}
