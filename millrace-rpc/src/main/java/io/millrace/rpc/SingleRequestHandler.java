package io.millrace.rpc;

import org.reactivestreams.Publisher;

/**
 * Serves a method whose caller sends one message (unary, server streaming, fire-and-forget): the
 * returned Publisher's items are the responses (exactly one for unary), its completion ends the
 * call with OK, its failure with {@link Status#fromThrowable}.
 */
@FunctionalInterface
public interface SingleRequestHandler<Req, Resp> {
  Publisher<Resp> handle(Req request, ServerContext context);
}
