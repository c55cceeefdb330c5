package io.millrace.rpc;

import org.reactivestreams.Publisher;

/**
 * Serves a method whose caller sends a stream of messages (client streaming, bidirectional): the
 * handler subscribes to {@code requests} (its demand is the caller's credit) and returns the
 * responses, as {@link SingleRequestHandler} does.
 */
@FunctionalInterface
public interface StreamRequestHandler<Req, Resp> {
  Publisher<Resp> handle(Publisher<Req> requests, ServerContext context);
}
