package io.millrace.rpc;

/** A method and its handler, one of the two shapes. */
record ServerMethod<Req, Resp>(
    MethodDescriptor<Req, Resp> descriptor,
    SingleRequestHandler<Req, Resp> single,
    StreamRequestHandler<Req, Resp> streaming) {}
