package io.millrace.rpc;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * The routing extension as rsocket-java and Spring clients send it: composite metadata (MIME type
 * {@value #COMPOSITE_MIME_TYPE} in SETUP) with a routing entry ({@value #ROUTING_MIME_TYPE},
 * well-known id 0x7E) whose first tag names the method as {@code package.Service.Method}. On a
 * channel the route travels in the first payload only.
 *
 * <pre>
 * composite entry   byte: 0x80 | well-known id, or (MIME length - 1) followed by the MIME type
 *                   u24 length, then the entry's metadata
 * routing metadata  per tag: u8 length, then the tag in UTF-8
 * </pre>
 */
final class Routing {
  static final String COMPOSITE_MIME_TYPE = "message/x.rsocket.composite-metadata.v0";
  static final String ROUTING_MIME_TYPE = "message/x.rsocket.routing.v0";
  static final int ROUTING_MIME_ID = 0x7E;

  private Routing() {}

  /**
   * The first route tag in composite metadata, or null when it has no routing entry.
   *
   * @throws StatusException INTERNAL when the metadata is not valid composite metadata
   */
  static String firstRouteInComposite(ByteBuf metadata) {
    if (metadata == null) {
      return null;
    }
    ByteBuf in = metadata.duplicate();
    try {
      while (in.isReadable()) {
        int first = in.readUnsignedByte();
        boolean routing;
        if ((first & 0x80) != 0) {
          routing = (first & 0x7F) == ROUTING_MIME_ID;
        } else {
          int mimeLength = first + 1;
          need(in, mimeLength, "MIME type");
          routing =
              mimeLength == ROUTING_MIME_TYPE.length()
                  && ROUTING_MIME_TYPE.contentEquals(
                      in.getCharSequence(in.readerIndex(), mimeLength, StandardCharsets.US_ASCII));
          in.skipBytes(mimeLength);
        }
        need(in, 3, "entry length");
        int length = in.readUnsignedMedium();
        need(in, length, "entry");
        if (routing) {
          return firstRoute(in.slice(in.readerIndex(), length));
        }
        in.skipBytes(length);
      }
      return null;
    } catch (Wire.MalformedMetadataException e) {
      throw Status.INTERNAL
          .withMessage("malformed composite metadata: " + e.getMessage())
          .asException();
    }
  }

  /**
   * The first tag of routing metadata (a connection whose metadata MIME type is the routing type
   * itself), or null when it has none.
   */
  static String firstRoute(ByteBuf routing) {
    if (routing == null || !routing.isReadable()) {
      return null;
    }
    int length = routing.getUnsignedByte(routing.readerIndex());
    if (routing.readableBytes() < 1 + length) {
      throw Status.INTERNAL
          .withMessage("malformed routing metadata: a tag runs past the end")
          .asException();
    }
    return routing.toString(routing.readerIndex() + 1, length, StandardCharsets.UTF_8);
  }

  /** Writes composite metadata with one routing entry carrying {@code route}. */
  static void encodeComposite(ByteBuf out, String route) {
    byte[] tag = route.getBytes(StandardCharsets.UTF_8);
    if (tag.length > 255) {
      throw new IllegalArgumentException("a route tag has at most 255 bytes: " + route);
    }
    out.writeByte(0x80 | ROUTING_MIME_ID);
    out.writeMedium(1 + tag.length);
    out.writeByte(tag.length);
    out.writeBytes(tag);
  }

  /**
   * The route of a full method name: {@code package.Service/Method} becomes {@code
   * package.Service.Method}.
   */
  static String routeOf(String fullMethodName) {
    int slash = fullMethodName.lastIndexOf('/');
    return slash < 0
        ? fullMethodName
        : fullMethodName.substring(0, slash) + '.' + fullMethodName.substring(slash + 1);
  }

  private static void need(ByteBuf in, int n, String what) {
    if (in.readableBytes() < n) {
      throw new Wire.MalformedMetadataException("the " + what + " runs past the end");
    }
  }
}
