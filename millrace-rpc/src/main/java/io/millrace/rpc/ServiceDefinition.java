package io.millrace.rpc;

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

  private ServiceDefinition(String name, List<ServerMethod<?, ?>> methods) {
    this.name = name;
    this.methods = Collections.unmodifiableList(methods);
  }

  /** A service named {@code name} ({@code package.Service}). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  public String name() {
    return name;
  }

  List<ServerMethod<?, ?>> methods() {
    return methods;
  }

  /** Builds a {@link ServiceDefinition}. */
  public static final class Builder {
    private final String name;
    private final List<ServerMethod<?, ?>> methods = new ArrayList<>();

    private Builder(String name) {
      this.name = Objects.requireNonNull(name, "name");
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
      return new ServiceDefinition(name, new ArrayList<>(methods));
    }
  }
}
