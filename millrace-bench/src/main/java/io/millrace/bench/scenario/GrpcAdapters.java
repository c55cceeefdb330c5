package io.millrace.bench.scenario;

import com.google.protobuf.Message;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.millrace.rpc.StatusException;
import java.util.function.BiFunction;

/** The scenarios' services on grpc-java: the same .proto methods and handlers as on Millrace. */
final class GrpcAdapters {
  private GrpcAdapters() {}

  /** grpc-java's unary descriptor of a Millrace method, with the marshallers its stubs use. */
  static <Req extends Message, Resp extends Message> MethodDescriptor<Req, Resp> method(
      io.millrace.rpc.MethodDescriptor<Req, Resp> method, Req request, Resp response) {
    return MethodDescriptor.<Req, Resp>newBuilder()
        .setType(MethodDescriptor.MethodType.UNARY)
        .setFullMethodName(method.fullName())
        .setRequestMarshaller(ProtoUtils.marshaller(request))
        .setResponseMarshaller(ProtoUtils.marshaller(response))
        .build();
  }

  /** A grpc-java unary handler answering with {@code handler}'s result, or its status. */
  static <Req, Resp> ServerCalls.UnaryMethod<Req, Resp> unary(
      BiFunction<Req, io.millrace.rpc.ServerContext, Resp> handler) {
    return (request, responses) -> {
      Resp response;
      try {
        response = handler.apply(request, null);
      } catch (StatusException e) {
        responses.onError(
            io.grpc.Status.fromCodeValue(e.status().code().value())
                .withDescription(e.status().message())
                .asRuntimeException());
        return;
      }
      responses.onNext(response);
      responses.onCompleted();
    };
  }
}
