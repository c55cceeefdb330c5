package io.millrace.bench.grpc;

import com.google.protobuf.UnsafeByteOperations;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.millrace.bench.v1.BenchMessage;
import java.io.InputStream;

/**
 * The harness's payload as bench.proto's BenchMessage, through grpc-protobuf's own marshaller: a
 * message built per send and parsed per receive, as with generated grpc-java stubs.
 */
final class BenchMessageMarshaller implements MethodDescriptor.Marshaller<byte[]> {
  private static final MethodDescriptor.Marshaller<BenchMessage> PROTO =
      ProtoUtils.marshaller(BenchMessage.getDefaultInstance());

  @Override
  public InputStream stream(byte[] payload) {
    return PROTO.stream(
        BenchMessage.newBuilder().setPayload(UnsafeByteOperations.unsafeWrap(payload)).build());
  }

  @Override
  public byte[] parse(InputStream stream) {
    return PROTO.parse(stream).getPayload().toByteArray();
  }
}
