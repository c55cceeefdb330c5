package io.millrace.grpc;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.Metadata;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import org.reactivestreams.Subscriber;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on {@link MillraceClientCall} as the subscriber of a Millrace call's
 * responses, on a call started over a real connection whose listener asks as grpc-java's streaming
 * stubs do (two at first, then one per message). The TCK's Publisher stands in for the Millrace
 * call's responses.
 */
public class ClientCallTckTest extends SubscriberBlackboxVerification<EchoReply> {
  private RpcOverTcp tcp;
  private io.grpc.Channel channel;

  public ClientCallTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @BeforeClass
  public void serve() throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build());
    channel = MillraceChannel.of(tcp.client());
  }

  @AfterClass
  public void stop() {
    tcp.close();
  }

  @Override
  @SuppressWarnings("unchecked")
  public Subscriber<EchoReply> createSubscriber() {
    ClientCall<?, EchoReply> call =
        channel.newCall(EchoServiceGrpc.getCountMethod(), CallOptions.DEFAULT);
    call.start(
        new ClientCall.Listener<>() {
          @Override
          public void onMessage(EchoReply message) {
            call.request(1);
          }
        },
        new Metadata());
    call.request(2);
    return (Subscriber<EchoReply>) call;
  }

  @Override
  public EchoReply createElement(int element) {
    return EchoReply.newBuilder().setSequence(element).build();
  }
}
