package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.protobuf.StringValue;
import io.millrace.core.Responder;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveHandler;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.ReactiveResponder;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

/**
 * A server that serves RPC next to other requests (as the echo server does): native connections are
 * all RPC, other connections go to the other responder, and on routing connections only the calls
 * whose route names a served method are RPC.
 */
class RpcNextToOtherRequestsTest {
  private static final Duration WAIT = Duration.ofSeconds(10);

  private RpcOverTcp tcp;

  /** The other responder: answers "other:" and the request's data. */
  private static final Responder OTHER =
      ReactiveResponder.of(
          new ReactiveHandler() {
            @Override
            public Publisher<Payload> requestResponse(Payload p) {
              String data = p.dataUtf8();
              p.release();
              return Mono.just(Payload.of("other:" + data));
            }
          });

  @BeforeEach
  void start() throws Exception {
    RpcServer rpc = RpcServer.builder().service(new TestService().definition()).build();
    tcp = RpcOverTcp.serve((setup, connection) -> rpc.responder(setup, connection, OTHER));
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private ReactiveRequester connect(String metadataMimeType) throws Exception {
    return tcp.connect(metadataMimeType);
  }

  @Test
  void plainConnections_reachTheOtherResponder() throws Exception {
    ReactiveRequester plain = connect("application/binary");
    assertThat(Mono.from(plain.requestResponse(Payload.of("x"))).block(WAIT).dataUtf8())
        .isEqualTo("other:x");
  }

  @Test
  void onRoutingConnections_servedRoutesAreRpc_andOthersGoElsewhere() throws Exception {
    ReactiveRequester routing = connect(Routing.COMPOSITE_MIME_TYPE);
    RpcClient rpc = RpcClient.routing(routing);
    assertThat(
            Mono.from(rpc.unary(TestService.ECHO, StringValue.of("rpc"), CallOptions.DEFAULT))
                .block(WAIT))
        .isEqualTo(StringValue.of("rpc"));
    ByteBuf unknownRoute = ByteBufAllocator.DEFAULT.buffer();
    Routing.encodeComposite(unknownRoute, "some.other.Route");
    assertThat(
            Mono.from(
                    routing.requestResponse(
                        Payload.of(
                            unknownRoute,
                            io.netty.buffer.Unpooled.copiedBuffer(
                                "y", java.nio.charset.StandardCharsets.UTF_8))))
                .block(WAIT)
                .dataUtf8())
        .isEqualTo("other:y");
    assertThat(Mono.from(routing.requestResponse(Payload.of("no route"))).block(WAIT).dataUtf8())
        .as("metadata that is not composite at all")
        .isEqualTo("other:no route");
  }
}
