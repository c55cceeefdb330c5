package io.millrace.rpc;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.util.Objects;

/**
 * One RPC method: its full name ({@code package.Service/Method}), its shape, its options and how
 * its messages are marshalled. Generated code makes one per method, once; the id is computed then.
 *
 * <p>Interactions: UNARY is request-response (fire-and-forget when {@link #fireAndForget()}),
 * SERVER_STREAMING request-stream, CLIENT_STREAMING and BIDI_STREAMING request-channel.
 */
public final class MethodDescriptor<Req, Resp> {
  /** The method's shape, as in the .proto file. */
  public enum Type {
    UNARY,
    SERVER_STREAMING,
    CLIENT_STREAMING,
    BIDI_STREAMING;

    /** Whether the caller sends a stream of messages (a request-channel). */
    public boolean clientSendsStream() {
      return this == CLIENT_STREAMING || this == BIDI_STREAMING;
    }

    /** Whether the server answers with a stream of messages. */
    public boolean serverSendsStream() {
      return this == SERVER_STREAMING || this == BIDI_STREAMING;
    }
  }

  private final String fullName;
  private final String route;
  private final long id;
  private final Type type;
  private final boolean fireAndForget;
  private final boolean idempotent;
  private final Marshaller<Req> requestMarshaller;
  private final Marshaller<Resp> responseMarshaller;
  private final ByteBuf plainCallHeader;

  private MethodDescriptor(Builder<Req, Resp> b) {
    this.fullName = b.fullName;
    this.route = Routing.routeOf(b.fullName);
    this.id = MethodIds.of(b.fullName);
    this.type = b.type;
    this.fireAndForget = b.fireAndForget;
    this.idempotent = b.idempotent;
    this.requestMarshaller = b.requestMarshaller;
    this.responseMarshaller = b.responseMarshaller;
    ByteBuf header = Unpooled.buffer(16);
    CallHeader.encode(header, id, null, CallHeader.NO_TIMEOUT, null);
    this.plainCallHeader = Unpooled.unreleasableBuffer(header.asReadOnly());
  }

  /**
   * The call header of a call without deadline or headers, the same bytes every time: shared by
   * every such call (read-only, and releasing it does nothing), so it costs no buffer per call.
   */
  ByteBuf plainCallHeader() {
    return plainCallHeader;
  }

  /** A method named {@code fullName} ({@code package.Service/Method}) of {@code type}. */
  public static <Req, Resp> Builder<Req, Resp> newBuilder(
      String fullName,
      Type type,
      Marshaller<Req> requestMarshaller,
      Marshaller<Resp> responseMarshaller) {
    return new Builder<>(fullName, type, requestMarshaller, responseMarshaller);
  }

  /** {@code package.Service/Method}. */
  public String fullName() {
    return fullName;
  }

  /** {@code package.Service}. */
  public String serviceName() {
    return fullName.substring(0, fullName.lastIndexOf('/'));
  }

  /** The route routing-extension callers use: {@code package.Service.Method}. */
  public String route() {
    return route;
  }

  /** The 64-bit id the call header carries ({@link MethodIds}). */
  public long id() {
    return id;
  }

  public Type type() {
    return type;
  }

  /** A unary method sent as fire-and-forget: no response, no status. */
  public boolean fireAndForget() {
    return fireAndForget;
  }

  /** Safe to retry: calling it twice has the effect of calling it once. */
  public boolean idempotent() {
    return idempotent;
  }

  public Marshaller<Req> requestMarshaller() {
    return requestMarshaller;
  }

  public Marshaller<Resp> responseMarshaller() {
    return responseMarshaller;
  }

  @Override
  public String toString() {
    return fullName + " (" + type + (fireAndForget ? ", fire-and-forget" : "") + ")";
  }

  /** Builds a {@link MethodDescriptor}. */
  public static final class Builder<Req, Resp> {
    private final String fullName;
    private final Type type;
    private final Marshaller<Req> requestMarshaller;
    private final Marshaller<Resp> responseMarshaller;
    private boolean fireAndForget;
    private boolean idempotent;

    private Builder(
        String fullName,
        Type type,
        Marshaller<Req> requestMarshaller,
        Marshaller<Resp> responseMarshaller) {
      Objects.requireNonNull(fullName, "fullName");
      int slash = fullName.lastIndexOf('/');
      if (slash <= 0 || slash == fullName.length() - 1 || fullName.indexOf('/') != slash) {
        throw new IllegalArgumentException(
            "a full method name is package.Service/Method: " + fullName);
      }
      this.fullName = fullName;
      this.type = Objects.requireNonNull(type, "type");
      this.requestMarshaller = Objects.requireNonNull(requestMarshaller, "requestMarshaller");
      this.responseMarshaller = Objects.requireNonNull(responseMarshaller, "responseMarshaller");
    }

    /** Sends the method as fire-and-forget (unary methods only). */
    public Builder<Req, Resp> fireAndForget(boolean fireAndForget) {
      if (fireAndForget && type != Type.UNARY) {
        throw new IllegalArgumentException(
            "only a unary method can be fire-and-forget: " + fullName);
      }
      this.fireAndForget = fireAndForget;
      return this;
    }

    public Builder<Req, Resp> idempotent(boolean idempotent) {
      this.idempotent = idempotent;
      return this;
    }

    public MethodDescriptor<Req, Resp> build() {
      return new MethodDescriptor<>(this);
    }
  }
}
