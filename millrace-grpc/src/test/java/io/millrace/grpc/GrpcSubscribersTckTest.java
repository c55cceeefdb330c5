package io.millrace.grpc;

import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.rpc.BridgedCall;
import io.millrace.rpc.Headers;
import java.util.concurrent.atomic.AtomicReference;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import org.reactivestreams.tck.SubscriberBlackboxVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.Factory;

/**
 * The Reactive Streams TCK on the bridge's Subscribers: {@link ResponseSender}, which takes a
 * Millrace handler's responses to a gRPC server call (here one that is always ready and keeps
 * nothing), and the {@link HostedCall}'s reader of a streaming call's requests, which hands them to
 * a grpc-java service (Chat, asking one at a time as grpc-java's stubs do). Each is driven by the
 * TCK's own Publisher.
 */
public class GrpcSubscribersTckTest extends SubscriberBlackboxVerification<EchoRequest> {
  private final String name;
  private final boolean sender;

  @Factory
  public static Object[] all() {
    return new Object[] {
      new GrpcSubscribersTckTest("ResponseSender", true),
      new GrpcSubscribersTckTest("HostedCall's request reader", false),
    };
  }

  public GrpcSubscribersTckTest(String name, boolean sender) {
    super(new TestEnvironment(2_000, 50));
    this.name = name;
    this.sender = sender;
  }

  @Override
  @SuppressWarnings("unchecked")
  public Subscriber<EchoRequest> createSubscriber() {
    if (sender) {
      BridgedCall<Object, EchoRequest> bridged =
          BridgedCall.of(
              HostedCallTckTest.RPC,
              (io.millrace.rpc.MethodDescriptor<Object, EchoRequest>)
                  HostedCallTckTest.RPC.services().get(0).methods().stream()
                      .filter(d -> d.fullName().endsWith("/Chat"))
                      .findFirst()
                      .orElseThrow(),
              Headers.EMPTY,
              null,
              HostedCallTckTest.LOOP,
              null);
      return new ResponseSender<>(new QuietServerCall<>(), bridged, false);
    }
    AtomicReference<Subscriber<? super EchoRequest>> caught = new AtomicReference<>();
    Publisher<EchoRequest> requests = caught::set;
    var method = EchoServiceGrpc.getChatMethod();
    HostedCall.streaming(
            method,
            HostedCallTckTest.handler(method),
            null,
            requests,
            HostedCallTckTest.context("Chat"))
        .subscribe(new TakingAll());
    return (Subscriber<EchoRequest>) caught.get();
  }

  @Override
  public EchoRequest createElement(int element) {
    return EchoRequest.newBuilder().setFailMessage(Integer.toString(element)).build();
  }

  @Override
  public String toString() {
    return name;
  }

  /** The hosted call's caller: asks for every response and keeps none. */
  private static final class TakingAll implements Subscriber<EchoReply> {
    @Override
    public void onSubscribe(Subscription s) {
      s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(EchoReply reply) {}

    @Override
    public void onError(Throwable t) {}

    @Override
    public void onComplete() {}
  }
}
