package io.millrace.rpc;

import com.google.protobuf.StringValue;
import java.time.Duration;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;
import org.testng.annotations.AfterClass;
import org.testng.annotations.BeforeClass;

/**
 * The Reactive Streams TCK on {@link UnaryCall}, the client's unary call, against a real server:
 * one response (each subscriber makes its own call, so the TCK's multi-subscriber rules run too).
 *
 * <p>A unary call always answers once or fails, so the TCK's empty Publisher (asked for by the
 * checks of {@code subscribe} alone, and by the optional check that an empty stream completes,
 * which does not apply) is an ordinary call.
 */
public class UnaryCallTckTest extends PublisherVerification<StringValue> {
  private RpcOverTcp tcp;
  private RpcClient rpc;

  public UnaryCallTckTest() {
    super(new TestEnvironment(2_000, 50));
  }

  @BeforeClass
  public void serve() throws Exception {
    tcp = RpcOverTcp.serve(RpcServer.builder().service(new TestService().definition()).build());
    rpc = tcp.client();
  }

  @AfterClass
  public void stop() {
    tcp.close();
  }

  @Override
  public Publisher<StringValue> createPublisher(long elements) {
    return rpc.unary(TestService.ECHO, TestService.text("hi"), CallOptions.DEFAULT);
  }

  /** A call whose deadline has passed before it is made fails at once, without demand. */
  @Override
  public Publisher<StringValue> createFailedPublisher() {
    return rpc.unary(
        TestService.ECHO, TestService.text("hi"), CallOptions.DEFAULT.withTimeout(Duration.ZERO));
  }

  @Override
  public long maxElementsFromPublisher() {
    return 1;
  }
}
