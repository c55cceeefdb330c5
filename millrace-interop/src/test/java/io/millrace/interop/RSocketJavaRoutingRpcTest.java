package io.millrace.interop;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import io.millrace.core.Responder;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcServer;
import io.millrace.transport.netty.MillraceServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import io.rsocket.Payload;
import io.rsocket.RSocket;
import io.rsocket.core.RSocketConnector;
import io.rsocket.exceptions.ApplicationErrorException;
import io.rsocket.metadata.CompositeMetadataCodec;
import io.rsocket.metadata.TaggingMetadataCodec;
import io.rsocket.metadata.WellKnownMimeType;
import io.rsocket.transport.netty.client.TcpClientTransport;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Flux;

/**
 * rsocket-java 1.1.5 calls Millrace RPC the way Spring's RSocketRequester does: composite metadata
 * with a routing entry naming {@code package.Service.Method}, protobuf data, and on a channel the
 * route on the first payload only. Failures come back as APPLICATION_ERROR "CODE: message".
 */
@Timeout(30)
class RSocketJavaRoutingRpcTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private MillraceServer server;
  private RSocket rsocket;

  @BeforeEach
  void start() {
    RpcServer rpc =
        RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build();
    try {
      server =
          MillraceServer.builder()
              .bindAddress("127.0.0.1", 0)
              .acceptor(
                  (setup, connection) -> rpc.responder(setup, connection, Responder.REJECT_ALL))
              .bind();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
    rsocket =
        RSocketConnector.create()
            .metadataMimeType(WellKnownMimeType.MESSAGE_RSOCKET_COMPOSITE_METADATA.getString())
            .dataMimeType("application/x-protobuf")
            .connect(TcpClientTransport.create("127.0.0.1", server.port()))
            .block(WAIT);
  }

  @AfterEach
  void stop() {
    rsocket.dispose();
    server.close();
  }

  private static ByteBuf route(String route) {
    CompositeByteBuf metadata = ByteBufAllocator.DEFAULT.compositeBuffer();
    CompositeMetadataCodec.encodeAndAddMetadata(
        metadata,
        ByteBufAllocator.DEFAULT,
        WellKnownMimeType.MESSAGE_RSOCKET_ROUTING,
        TaggingMetadataCodec.createRoutingMetadata(ByteBufAllocator.DEFAULT, List.of(route))
            .getContent());
    return metadata;
  }

  private static Payload call(String method, com.google.protobuf.MessageLite request) {
    return DefaultPayload.create(
        Unpooled.wrappedBuffer(request.toByteArray()),
        route("millrace.echo.v1.EchoService." + method));
  }

  private static EchoReply reply(Payload p) {
    try {
      return EchoReply.parseFrom(ByteBufUtil.getBytes(p.sliceData()));
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      throw new AssertionError(e);
    } finally {
      p.release();
    }
  }

  private static EchoRequest echo(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void requestResponse_reachesEcho() {
    EchoReply r =
        reply(rsocket.requestResponse(call("Echo", echo("from rsocket-java"))).block(WAIT));
    assertThat(r.getPayload().toStringUtf8()).isEqualTo("from rsocket-java");
  }

  @Test
  void aFailure_isApplicationErrorWithTheStatus() {
    EchoRequest failing =
        EchoRequest.newBuilder().setFailWithStatus(5).setFailMessage("no such thing").build();
    assertThatThrownBy(() -> rsocket.requestResponse(call("Echo", failing)).block(WAIT))
        .isInstanceOf(ApplicationErrorException.class)
        .hasMessage("NOT_FOUND: no such thing");
  }

  @Test
  void requestStream_reachesCount() {
    List<Long> sequences =
        rsocket
            .requestStream(call("Count", CountRequest.newBuilder().setN(5).build()))
            .map(p -> reply(p).getSequence())
            .collectList()
            .block(WAIT);
    assertThat(sequences).containsExactly(0L, 1L, 2L, 3L, 4L);
  }

  @Test
  void requestChannel_carriesTheRouteOnItsFirstPayloadOnly() {
    Flux<Payload> requests =
        Flux.range(0, 3)
            .map(
                i ->
                    i == 0
                        ? call("Chat", echo("m0"))
                        : DefaultPayload.create(
                            Unpooled.wrappedBuffer(echo("m" + i).toByteArray())));
    List<String> replies =
        rsocket
            .requestChannel(requests)
            .map(p -> reply(p).getPayload().toStringUtf8())
            .collectList()
            .block(WAIT);
    assertThat(replies).containsExactly("m0", "m1", "m2");
  }

  @Test
  void anUnknownRoute_isRejectedByTheOtherResponder() {
    assertThatThrownBy(
            () ->
                rsocket
                    .requestResponse(
                        DefaultPayload.create(
                            Unpooled.wrappedBuffer(new byte[0]),
                            route("millrace.echo.v1.EchoService.Nope")))
                    .block(WAIT))
        .isInstanceOf(ApplicationErrorException.class);
  }
}
