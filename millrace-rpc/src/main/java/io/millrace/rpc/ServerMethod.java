package io.millrace.rpc;

import org.reactivestreams.Publisher;

/** A method and its handler, one of the two shapes. */
record ServerMethod<Req, Resp>(
    MethodDescriptor<Req, Resp> descriptor,
    SingleRequestHandler<Req, Resp> single,
    StreamRequestHandler<Req, Resp> streaming) {

  /**
   * Whether a caller that waits for an answer can call it: any method but a fire-and-forget one
   * whose response type has no empty message to answer with (not protobuf).
   */
  boolean answers() {
    return !descriptor.fireAndForget() || emptyResponse() != null;
  }

  /**
   * The responses to one request from a caller that waits for an answer. A fire-and-forget method
   * called so (by a caller that knows only unary calls: grpc-java's stubs, gRPC clients) answers
   * its response type's empty message once its handler is done.
   */
  Publisher<Resp> answer(Req request, ServerContext context) {
    Publisher<Resp> responses = single.handle(request, context);
    if (!descriptor.fireAndForget() || responses == null) {
      return responses;
    }
    Resp empty = emptyResponse();
    return empty == null ? responses : Publishers.thenJust(responses, empty);
  }

  /** The response type's empty message (a protobuf default instance), or null when not protobuf. */
  @SuppressWarnings("unchecked")
  private Resp emptyResponse() {
    return descriptor.responseMarshaller() instanceof ProtobufMarshaller<?> p
        ? (Resp) p.defaultInstance()
        : null;
  }
}
