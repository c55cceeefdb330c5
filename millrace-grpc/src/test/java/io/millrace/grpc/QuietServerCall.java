package io.millrace.grpc;

import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A gRPC server call with no transport behind it: always ready, it drops what it is sent and counts
 * what is asked of it.
 */
class QuietServerCall<Req, Resp> extends ServerCall<Req, Resp> {
  final AtomicInteger requested = new AtomicInteger();

  @Override
  public void request(int numMessages) {
    requested.addAndGet(numMessages);
  }

  @Override
  public void sendHeaders(Metadata headers) {}

  @Override
  public void sendMessage(Resp message) {}

  @Override
  public void close(io.grpc.Status status, Metadata trailers) {}

  @Override
  public boolean isCancelled() {
    return false;
  }

  @Override
  public MethodDescriptor<Req, Resp> getMethodDescriptor() {
    return null;
  }
}
