package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.rsocket.metadata.CompositeMetadata;
import io.rsocket.metadata.CompositeMetadataCodec;
import io.rsocket.metadata.RoutingMetadata;
import io.rsocket.metadata.TaggingMetadataCodec;
import io.rsocket.metadata.WellKnownMimeType;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The routing extension, read from and written for rsocket-java's own codec. */
class RoutingTest {
  private static final ByteBufAllocator ALLOC = ByteBufAllocator.DEFAULT;

  @Test
  void rsocketJavasCompositeMetadata_withOtherEntriesFirst_givesTheFirstRoute() {
    CompositeByteBuf composite = ALLOC.compositeBuffer();
    try {
      CompositeMetadataCodec.encodeAndAddMetadata(
          composite,
          ALLOC,
          "application/x.custom-tracing",
          Unpooled.copiedBuffer("trace", StandardCharsets.UTF_8));
      CompositeMetadataCodec.encodeAndAddMetadata(
          composite,
          ALLOC,
          WellKnownMimeType.APPLICATION_JSON,
          Unpooled.copiedBuffer("{}", StandardCharsets.UTF_8));
      CompositeMetadataCodec.encodeAndAddMetadata(
          composite,
          ALLOC,
          WellKnownMimeType.MESSAGE_RSOCKET_ROUTING,
          TaggingMetadataCodec.createRoutingMetadata(
                  ALLOC, List.of("millrace.echo.v1.EchoService.Echo", "second"))
              .getContent());
      assertThat(Routing.firstRouteInComposite(composite))
          .isEqualTo("millrace.echo.v1.EchoService.Echo");
      assertThat(composite.readerIndex()).isZero();
    } finally {
      composite.release();
    }
  }

  @Test
  void routingSpelledAsAMimeString_isFoundToo() {
    CompositeByteBuf composite = ALLOC.compositeBuffer();
    try {
      CompositeMetadataCodec.encodeAndAddMetadata(
          composite,
          ALLOC,
          Routing.ROUTING_MIME_TYPE + "x", // one character longer: not routing
          TaggingMetadataCodec.createRoutingMetadata(ALLOC, List.of("wrong")).getContent());
      ByteBuf routing =
          TaggingMetadataCodec.createRoutingMetadata(ALLOC, List.of("a.B.C")).getContent();
      ByteBuf entry = ALLOC.buffer();
      entry.writeByte(Routing.ROUTING_MIME_TYPE.length() - 1);
      entry.writeCharSequence(Routing.ROUTING_MIME_TYPE, StandardCharsets.US_ASCII);
      entry.writeMedium(routing.readableBytes());
      entry.writeBytes(routing);
      routing.release();
      composite.addComponent(true, entry);
      assertThat(Routing.firstRouteInComposite(composite)).isEqualTo("a.B.C");
    } finally {
      composite.release();
    }
  }

  @Test
  void noRoutingEntry_isNull_andBrokenMetadataIsInternal() {
    CompositeByteBuf composite = ALLOC.compositeBuffer();
    try {
      CompositeMetadataCodec.encodeAndAddMetadata(
          composite,
          ALLOC,
          WellKnownMimeType.TEXT_PLAIN,
          Unpooled.copiedBuffer("x", StandardCharsets.UTF_8));
      assertThat(Routing.firstRouteInComposite(composite)).isNull();
      assertThat(Routing.firstRouteInComposite(null)).isNull();
      for (int n = 1; n < composite.readableBytes(); n++) {
        ByteBuf prefix = composite.slice(0, n);
        assertThatThrownBy(() -> Routing.firstRouteInComposite(prefix))
            .as("prefix of %d bytes", n)
            .isInstanceOfSatisfying(
                StatusException.class,
                e -> assertThat(e.status().code()).isEqualTo(Status.Code.INTERNAL));
      }
    } finally {
      composite.release();
    }
  }

  @Test
  void ourEncoding_isReadByRsocketJava() {
    ByteBuf out = ALLOC.buffer();
    try {
      Routing.encodeComposite(out, Routing.routeOf("millrace.echo.v1.EchoService/Chat"));
      CompositeMetadata.Entry entry = new CompositeMetadata(out, false).iterator().next();
      assertThat(entry.getMimeType()).isEqualTo(Routing.ROUTING_MIME_TYPE);
      assertThat(new RoutingMetadata(entry.getContent()).iterator().next())
          .isEqualTo("millrace.echo.v1.EchoService.Chat");
      assertThat(Routing.firstRouteInComposite(out)).isEqualTo("millrace.echo.v1.EchoService.Chat");
    } finally {
      out.release();
    }
  }
}
