package io.millrace.rpc;

import com.google.protobuf.Descriptors;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.reactivestreams.Publisher;

/** A service's methods with their handlers, as generated server bindings build it. */
public final class ServiceDefinition {
  /** Completes at once: a fire-and-forget handler that returned null. */
  private static final Publisher<Void> NOTHING = Publishers.empty();

  private final String name;
  private final List<ServerMethod<?, ?>> methods;
  private final Descriptors.ServiceDescriptor schema;

  private ServiceDefinition(Builder b) {
    this.name = b.name;
    this.methods = Collections.unmodifiableList(new ArrayList<>(b.methods));
    this.schema = b.schema;
  }

  /** A service named {@code name} ({@code package.Service}). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  List<ServerMethod<?, ?>> serverMethods() {
    return methods;
  }

  /** The service's methods, in the order they were added. */
  public List<MethodDescriptor<?, ?>> methods() {
    List<MethodDescriptor<?, ?>> descriptors = new ArrayList<>(methods.size());
    for (ServerMethod<?, ?> m : methods) {
      descriptors.add(m.descriptor());
    }
    return descriptors;
  }

  /**
   * The service as its .proto file declares it, or null when the binding gave none (generated
   * bindings give it unless the file is for protobuf's lite runtime): what gRPC server reflection
   * describes.
   */
  public Descriptors.ServiceDescriptor schema() {
    return schema;
  }

  /** Builds a {@link ServiceDefinition}. */
  public static final class Builder {
    private final String name;
    private final List<ServerMethod<?, ?>> methods = new ArrayList<>();
    private Descriptors.ServiceDescriptor schema;

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
    }

    /** The service's protobuf descriptor, which must have the service's full name. */
    public Builder schema(Descriptors.ServiceDescriptor schema) {
      if (schema != null && !schema.getFullName().equals(name)) {
        throw new IllegalArgumentException(
            "the schema describes " + schema.getFullName() + ", not " + name);
      }
      this.schema = schema;
      return this;
    }

    /** A unary, server-streaming or fire-and-forget method. */
    public <Req, Resp> Builder method(
        MethodDescriptor<Req, Resp> method, SingleRequestHandler<Req, Resp> handler) {
      if (method.type().clientSendsStream()) {
        throw new IllegalArgumentException(method + " takes a stream: use streamingMethod");
      }
      return add(new ServerMethod<>(method, Objects.requireNonNull(handler, "handler"), null));
    }

    /**
     * A fire-and-forget method: the handler's Publisher is run for its effect (its completion or
     * failure is only logged; the caller is not told).
     */
    @SuppressWarnings("unchecked")
    public <Req, Resp> Builder fireAndForgetMethod(
        MethodDescriptor<Req, Resp> method, FireAndForgetHandler<Req> handler) {
      if (!method.fireAndForget()) {
        throw new IllegalArgumentException(method + " is not marked fire-and-forget");
      }
      Objects.requireNonNull(handler, "handler");
      // A Publisher<Void> emits no item, so it stands for a Publisher of any type.
      return method(
          method,
          (request, context) -> {
            Publisher<Void> done = handler.handle(request, context);
            return (Publisher<Resp>) (Publisher<?>) (done != null ? done : NOTHING);
          });
    }

    /** A client-streaming or bidirectional method. */
    public <Req, Resp> Builder streamingMethod(
        MethodDescriptor<Req, Resp> method, StreamRequestHandler<Req, Resp> handler) {
      if (!method.type().clientSendsStream()) {
        throw new IllegalArgumentException(method + " takes one message: use method");
      }
      return add(new ServerMethod<>(method, null, Objects.requireNonNull(handler, "handler")));
    }

    private Builder add(ServerMethod<?, ?> m) {
      if (!m.descriptor().serviceName().equals(name)) {
        throw new IllegalArgumentException(m.descriptor() + " is not a method of " + name);
      }
      methods.add(m);
      return this;
    }

    public ServiceDefinition build() {
      return new ServiceDefinition(this);
    }
  }
}
