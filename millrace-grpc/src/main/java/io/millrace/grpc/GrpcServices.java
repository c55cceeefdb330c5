package io.millrace.grpc;

import com.google.protobuf.Descriptors;
import io.grpc.ServerServiceDefinition;
import io.grpc.ServiceDescriptor;
import io.grpc.protobuf.ProtoMethodDescriptorSupplier;
import io.grpc.protobuf.ProtoServiceDescriptorSupplier;
import io.millrace.rpc.MethodDescriptor;
import io.millrace.rpc.RpcServer;
import io.millrace.rpc.ServiceDefinition;
import io.netty.util.concurrent.EventExecutorGroup;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An {@link RpcServer}'s services as grpc-java's {@link ServerServiceDefinition}s, for a grpc-java
 * server of your own ({@link GrpcEndpoint} makes one). Each service carries its protobuf descriptor
 * when the binding gave it (generated bindings do), so that server reflection describes it.
 */
public final class GrpcServices {
  private GrpcServices() {}

  /**
   * The services of {@code server}; {@code loops} run the StreamObserver flavour's calls whose
   * handlers gRPC runs off an event loop (on an executor).
   */
  public static List<ServerServiceDefinition> of(RpcServer server, EventExecutorGroup loops) {
    Map<String, List<ServiceDefinition>> byName = new LinkedHashMap<>();
    for (ServiceDefinition s : server.services()) {
      byName.computeIfAbsent(s.name(), k -> new ArrayList<>()).add(s);
    }
    List<ServerServiceDefinition> out = new ArrayList<>(byName.size());
    for (Map.Entry<String, List<ServiceDefinition>> e : byName.entrySet()) {
      out.add(service(server, e.getKey(), e.getValue(), loops));
    }
    return out;
  }

  private static ServerServiceDefinition service(
      RpcServer server, String name, List<ServiceDefinition> parts, EventExecutorGroup loops) {
    Descriptors.ServiceDescriptor schema = null;
    for (ServiceDefinition part : parts) {
      if (part.schema() != null) {
        schema = part.schema();
      }
    }
    ServiceDescriptor.Builder descriptor = ServiceDescriptor.newBuilder(name);
    if (schema != null) {
      descriptor.setSchemaDescriptor(new Schema(schema));
    }
    List<io.grpc.MethodDescriptor<?, ?>> grpcMethods = new ArrayList<>();
    for (ServiceDefinition part : parts) {
      for (MethodDescriptor<?, ?> m : part.methods()) {
        io.grpc.MethodDescriptor<?, ?> g = toGrpc(m, schema);
        grpcMethods.add(g);
        descriptor.addMethod(g);
      }
    }
    ServerServiceDefinition.Builder def = ServerServiceDefinition.builder(descriptor.build());
    int i = 0;
    for (ServiceDefinition part : parts) {
      for (MethodDescriptor<?, ?> m : part.methods()) {
        add(def, server, m, grpcMethods.get(i++), loops);
      }
    }
    return def.build();
  }

  @SuppressWarnings("unchecked")
  private static <Req, Resp> void add(
      ServerServiceDefinition.Builder def,
      RpcServer server,
      MethodDescriptor<Req, Resp> method,
      io.grpc.MethodDescriptor<?, ?> grpcMethod,
      EventExecutorGroup loops) {
    def.addMethod(
        (io.grpc.MethodDescriptor<Req, Resp>) grpcMethod,
        new ServedMethod<>(server, method, loops));
  }

  /** {@code m} as gRPC describes it, with the method's schema when the service has one. */
  static <Req, Resp> io.grpc.MethodDescriptor<Req, Resp> toGrpc(
      MethodDescriptor<Req, Resp> m, Descriptors.ServiceDescriptor schema) {
    io.grpc.MethodDescriptor.Builder<Req, Resp> b =
        io.grpc.MethodDescriptor.newBuilder(
                Marshallers.toGrpc(m.requestMarshaller()),
                Marshallers.toGrpc(m.responseMarshaller()))
            .setFullMethodName(m.fullName())
            .setType(type(m.type()))
            .setIdempotent(m.idempotent());
    if (schema != null) {
      String simpleName = m.fullName().substring(m.fullName().lastIndexOf('/') + 1);
      Descriptors.MethodDescriptor method = schema.findMethodByName(simpleName);
      if (method != null) {
        b.setSchemaDescriptor(new MethodSchema(schema, method));
      }
    }
    return b.build();
  }

  /** A grpc-java method as Millrace describes it: same name, shape and messages. */
  static <Req, Resp> MethodDescriptor<Req, Resp> fromGrpc(io.grpc.MethodDescriptor<Req, Resp> m) {
    MethodDescriptor.Type type =
        switch (m.getType()) {
          case UNARY -> MethodDescriptor.Type.UNARY;
          case SERVER_STREAMING -> MethodDescriptor.Type.SERVER_STREAMING;
          case CLIENT_STREAMING -> MethodDescriptor.Type.CLIENT_STREAMING;
          case BIDI_STREAMING, UNKNOWN -> MethodDescriptor.Type.BIDI_STREAMING;
        };
    return MethodDescriptor.newBuilder(
            m.getFullMethodName(),
            type,
            Marshallers.fromGrpc(m.getRequestMarshaller()),
            Marshallers.fromGrpc(m.getResponseMarshaller()))
        .idempotent(m.isIdempotent() || m.isSafe())
        .build();
  }

  static io.grpc.MethodDescriptor.MethodType type(MethodDescriptor.Type type) {
    return switch (type) {
      case UNARY -> io.grpc.MethodDescriptor.MethodType.UNARY;
      case SERVER_STREAMING -> io.grpc.MethodDescriptor.MethodType.SERVER_STREAMING;
      case CLIENT_STREAMING -> io.grpc.MethodDescriptor.MethodType.CLIENT_STREAMING;
      case BIDI_STREAMING -> io.grpc.MethodDescriptor.MethodType.BIDI_STREAMING;
    };
  }

  /** What server reflection reads: the service's file and descriptor. */
  private static class Schema implements ProtoServiceDescriptorSupplier {
    private final Descriptors.ServiceDescriptor service;

    Schema(Descriptors.ServiceDescriptor service) {
      this.service = service;
    }

    @Override
    public Descriptors.FileDescriptor getFileDescriptor() {
      return service.getFile();
    }

    @Override
    public Descriptors.ServiceDescriptor getServiceDescriptor() {
      return service;
    }
  }

  private static final class MethodSchema extends Schema implements ProtoMethodDescriptorSupplier {
    private final Descriptors.MethodDescriptor method;

    MethodSchema(Descriptors.ServiceDescriptor service, Descriptors.MethodDescriptor method) {
      super(service);
      this.method = method;
    }

    @Override
    public Descriptors.MethodDescriptor getMethodDescriptor() {
      return method;
    }
  }
}
