package io.millrace.grpc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.common.base.Throwables;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.protobuf.ByteString;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.MethodDescriptor;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.millrace.core.CloseReason;
import io.millrace.core.Connection;
import io.millrace.core.ConnectionListener;
import io.millrace.core.Stream;
import io.millrace.core.StreamListener;
import io.millrace.echo.EchoServiceImpl;
import io.millrace.echo.v1.CountRequest;
import io.millrace.echo.v1.EchoReply;
import io.millrace.echo.v1.EchoRequest;
import io.millrace.echo.v1.EchoServiceGrpc;
import io.millrace.echo.v1.EchoServiceReactor;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.RpcOverTcp;
import io.millrace.rpc.RpcServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.EventExecutor;
import java.io.InputStream;
import java.net.SocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What a grpc-java {@code CallOptions} asks of one call over {@link MillraceChannel}, answered as
 * grpc-java's own channel answers it: per-call message size limits both ways, and waitForReady.
 */
@Timeout(60) // a call held forever by a regression fails the test instead of hanging it
class MillraceChannelCallOptionsTest {
  private static final long WAIT_S = 10;

  private RpcOverTcp tcp;
  private GatedConnection connection;
  private Channel channel;

  @BeforeEach
  void start() throws Exception {
    tcp =
        RpcOverTcp.serve(
            RpcServer.builder().service(EchoServiceReactor.bind(new EchoServiceImpl())).build());
    connection = new GatedConnection(tcp.client().connection());
    channel =
        MillraceChannel.of(RpcClient.of(io.millrace.streams.ReactiveRequester.of(connection)));
  }

  @AfterEach
  void stop() {
    tcp.close();
  }

  private EchoServiceGrpc.EchoServiceBlockingStub blocking() {
    return EchoServiceGrpc.newBlockingStub(channel).withDeadlineAfter(WAIT_S, TimeUnit.SECONDS);
  }

  private static EchoRequest request(String payload) {
    return EchoRequest.newBuilder().setPayload(ByteString.copyFromUtf8(payload)).build();
  }

  @Test
  void aResponseAboveTheInboundLimit_failsResourceExhausted_oneAtTheLimitPasses() {
    EchoRequest request = request("twelve bytes");
    int replySize =
        EchoReply.newBuilder().setPayload(request.getPayload()).build().getSerializedSize();

    assertThat(blocking().withMaxInboundMessageSize(replySize).echo(request).getPayload())
        .isEqualTo(request.getPayload());
    assertThatThrownBy(() -> blocking().withMaxInboundMessageSize(replySize - 1).echo(request))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
              assertThat(e.getStatus().getDescription())
                  .isEqualTo(
                      "gRPC message exceeds maximum size " + (replySize - 1) + ": " + replySize);
            });
  }

  @Test
  void aStreamedResponseAboveTheInboundLimit_endsTheStreamThere() {
    // Count's replies carry only their sequence: reply 0 is empty, reply 1 takes two bytes.
    Iterator<EchoReply> replies =
        blocking().withMaxInboundMessageSize(1).count(CountRequest.newBuilder().setN(5).build());
    assertThat(replies.next().getSequence()).isZero();
    assertThatThrownBy(replies::next)
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED));
  }

  @Test
  void aRequestAboveTheOutboundLimit_cancelsTheCall_asGrpcJavaDoes() {
    EchoRequest request = request("twelve bytes");
    int size = request.getSerializedSize();

    assertThat(blocking().withMaxOutboundMessageSize(size).echo(request).getPayload())
        .isEqualTo(request.getPayload());
    assertThatThrownBy(() -> blocking().withMaxOutboundMessageSize(size - 1).echo(request))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.CANCELLED);
              assertThat(e.getStatus().getDescription()).isEqualTo("Failed to stream message");
              assertThat(Throwables.getStackTraceAsString(e))
                  .contains("RESOURCE_EXHAUSTED")
                  .contains("message too large " + size + " > " + (size - 1));
            });
  }

  @Test
  void aStreamedRequestAboveTheOutboundLimit_cancelsTheCall() throws Exception {
    CompletableFuture<EchoReply> reply = new CompletableFuture<>();
    StreamObserver<EchoRequest> requests =
        EchoServiceGrpc.newStub(channel)
            .withMaxOutboundMessageSize(request("small").getSerializedSize())
            .collect(observer(reply));
    requests.onNext(request("small"));
    requests.onNext(request("far too large for the limit"));
    requests.onCompleted();
    assertThatThrownBy(() -> reply.get(WAIT_S, TimeUnit.SECONDS))
        .cause()
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.CANCELLED);
              assertThat(Throwables.getStackTraceAsString(e)).contains("message too large");
            });
  }

  @Test
  void theLimits_holdForAMarshallerThatIsNotGrpcProtobufs() {
    // A marshaller Millrace does not recognise: its messages go through its streams, serialized
    // into buffers, not written straight into the frame.
    MethodDescriptor<EchoRequest, EchoReply> echo =
        EchoServiceGrpc.getEchoMethod().toBuilder(
                new OwnMarshaller<>(EchoRequest.parser()), new OwnMarshaller<>(EchoReply.parser()))
            .build();
    EchoRequest request = request("twelve bytes");
    int size = request.getSerializedSize();
    assertThat(
            ClientCalls.blockingUnaryCall(
                    channel,
                    echo,
                    CallOptions.DEFAULT
                        .withMaxOutboundMessageSize(size)
                        .withMaxInboundMessageSize(size), // the reply is as large
                    request)
                .getPayload())
        .isEqualTo(request.getPayload());
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    echo,
                    CallOptions.DEFAULT.withMaxOutboundMessageSize(size - 1),
                    request))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.CANCELLED));
    assertThatThrownBy(
            () ->
                ClientCalls.blockingUnaryCall(
                    channel,
                    echo,
                    CallOptions.DEFAULT.withMaxInboundMessageSize(size - 1),
                    request))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getCode())
                    .isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED));
  }

  /** A protobuf marshaller of the test's own, which Millrace does not recognise. */
  private static final class OwnMarshaller<T extends com.google.protobuf.MessageLite>
      implements MethodDescriptor.Marshaller<T> {
    private final com.google.protobuf.Parser<T> parser;

    OwnMarshaller(com.google.protobuf.Parser<T> parser) {
      this.parser = parser;
    }

    @Override
    public InputStream stream(T value) {
      return new java.io.ByteArrayInputStream(value.toByteArray());
    }

    @Override
    public T parse(InputStream stream) {
      try {
        return parser.parseFrom(stream);
      } catch (java.io.IOException e) {
        throw new IllegalArgumentException(e);
      }
    }
  }

  private static <T> StreamObserver<T> observer(CompletableFuture<T> last) {
    return new StreamObserver<>() {
      @Override
      public void onNext(T value) {
        last.complete(value);
      }

      @Override
      public void onError(Throwable t) {
        last.completeExceptionally(t);
      }

      @Override
      public void onCompleted() {
        last.complete(null);
      }
    };
  }

  @Test
  void aWaitForReadyCall_waitsWhileTheConnectionCannotTakeCalls_andGoesWhenItCan()
      throws Exception {
    connection.hold();
    ListenableFuture<EchoReply> waiting =
        EchoServiceGrpc.newFutureStub(channel).withWaitForReady().echo(request("patient"));
    // It asked to be told when the connection is ready, and went nowhere.
    assertThat(connection.waiting()).isEqualTo(1);
    assertThat(waiting.isDone()).isFalse();

    // A call without waitForReady is not held: it goes to the connection at once.
    assertThat(blocking().echo(request("eager")).getPayload().toStringUtf8()).isEqualTo("eager");
    assertThat(waiting.isDone()).isFalse();

    connection.release();
    assertThat(waiting.get(WAIT_S, TimeUnit.SECONDS).getPayload().toStringUtf8())
        .isEqualTo("patient");
  }

  @Test
  void aWaitForReadyCall_failsAtItsDeadline_whileItWaits() {
    connection.hold();
    assertThatThrownBy(
            () ->
                EchoServiceGrpc.newBlockingStub(channel)
                    .withWaitForReady()
                    .withDeadlineAfter(200, TimeUnit.MILLISECONDS)
                    .echo(request("late")))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.DEADLINE_EXCEEDED);
              assertThat(e.getStatus().getDescription()).contains("waited for the connection");
            });
  }

  @Test
  void aWaitForReadyCall_cancelledWhileItWaits_endsCancelled_andNeverGoes() throws Exception {
    connection.hold();
    ListenableFuture<EchoReply> waiting =
        EchoServiceGrpc.newFutureStub(channel).withWaitForReady().echo(request("never"));
    assertThat(connection.waiting()).isEqualTo(1);
    waiting.cancel(true); // (a grpc-java future cancels its call only when told to interrupt)
    int before = connection.calls();
    connection.release(); // the call's start runs now, and finds the call ended
    assertThat(blocking().echo(request("after")).getPayload().toStringUtf8()).isEqualTo("after");
    assertThat(connection.calls()).as("only the later call went").isEqualTo(before + 1);
  }

  @Test
  void aWaitForReadyCall_failsUnavailable_whenTheConnectionClosesWhileItWaits() {
    connection.hold();
    ListenableFuture<EchoReply> waiting =
        EchoServiceGrpc.newFutureStub(channel).withWaitForReady().echo(request("stranded"));
    connection.close();
    assertThatThrownBy(() -> waiting.get(WAIT_S, TimeUnit.SECONDS))
        .cause()
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> assertThat(e.getStatus().getCode()).isEqualTo(io.grpc.Status.Code.UNAVAILABLE));
  }

  @Test
  void aWaitForReadyStreamingCall_waitsToo_andCarriesItsRequestsOnceItGoes() throws Exception {
    connection.hold();
    List<EchoReply> replies = new ArrayList<>();
    java.util.concurrent.CompletableFuture<Void> done =
        new java.util.concurrent.CompletableFuture<>();
    StreamObserver<EchoRequest> requests =
        EchoServiceGrpc.newStub(channel)
            .withWaitForReady()
            .chat(
                new StreamObserver<>() {
                  @Override
                  public void onNext(EchoReply reply) {
                    replies.add(reply);
                  }

                  @Override
                  public void onError(Throwable t) {
                    done.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(null);
                  }
                });
    requests.onNext(request("a"));
    requests.onNext(request("b"));
    requests.onCompleted();
    assertThat(connection.waiting()).isEqualTo(1);
    assertThat(done.isDone()).isFalse();

    connection.release();
    done.get(WAIT_S, TimeUnit.SECONDS); // the callbacks ran one at a time, before this
    assertThat(replies).extracting(r -> r.getPayload().toStringUtf8()).containsExactly("a", "b");
  }

  /**
   * A real connection whose readiness for calls this test decides: while held, {@link
   * #isReadyForCalls()} is false and callbacks wait here, as they wait in a connection whose
   * hand-off is full or whose peer does not read. Everything else goes to the real connection.
   */
  private static final class GatedConnection implements Connection {
    private final Connection real;
    private final List<Runnable> waiters = new ArrayList<>();
    private boolean ready = true;

    private final java.util.concurrent.atomic.AtomicInteger calls =
        new java.util.concurrent.atomic.AtomicInteger();

    GatedConnection(Connection real) {
      this.real = real;
      real.onClose().thenRun(this::release); // as a real connection releases its waiters
    }

    /** Requests made through this connection so far. */
    int calls() {
      return calls.get();
    }

    synchronized void hold() {
      ready = false;
    }

    void release() {
      List<Runnable> released;
      synchronized (this) {
        ready = true;
        released = new ArrayList<>(waiters);
        waiters.clear();
      }
      released.forEach(real::whenReadyForCalls);
    }

    synchronized int waiting() {
      return waiters.size();
    }

    @Override
    public boolean isReadyForCalls() {
      synchronized (this) {
        if (!ready) {
          return false;
        }
      }
      return real.isReadyForCalls();
    }

    @Override
    public void whenReadyForCalls(Runnable callback) {
      synchronized (this) {
        if (!ready) {
          waiters.add(callback);
          return;
        }
      }
      real.whenReadyForCalls(callback);
    }

    @Override
    public boolean awaitReadyForCalls(Duration timeout) {
      throw new UnsupportedOperationException("not used by the channel");
    }

    @Override
    public EventExecutor executor() {
      return real.executor();
    }

    @Override
    public ByteBufAllocator alloc() {
      return real.alloc();
    }

    @Override
    public String metadataMimeType() {
      return real.metadataMimeType();
    }

    @Override
    public String dataMimeType() {
      return real.dataMimeType();
    }

    @Override
    public SocketAddress remoteAddress() {
      return real.remoteAddress();
    }

    @Override
    public SocketAddress localAddress() {
      return real.localAddress();
    }

    @Override
    public boolean fireAndForget(ByteBuf metadata, ByteBuf data) {
      return real.fireAndForget(metadata, data);
    }

    @Override
    public void metadataPush(ByteBuf metadata) {
      real.metadataPush(metadata);
    }

    @Override
    public Stream requestResponse(ByteBuf metadata, ByteBuf data, StreamListener listener) {
      calls.incrementAndGet();
      return real.requestResponse(metadata, data, listener);
    }

    @Override
    public Stream requestStream(
        ByteBuf metadata, ByteBuf data, long initialRequestN, StreamListener listener) {
      calls.incrementAndGet();
      return real.requestStream(metadata, data, initialRequestN, listener);
    }

    @Override
    public Stream requestChannel(
        ByteBuf metadata,
        ByteBuf data,
        long initialRequestN,
        boolean complete,
        StreamListener listener) {
      calls.incrementAndGet();
      return real.requestChannel(metadata, data, initialRequestN, complete, listener);
    }

    @Override
    public void sendLease(int ttlMillis, int numberOfRequests, ByteBuf metadata) {
      real.sendLease(ttlMillis, numberOfRequests, metadata);
    }

    @Override
    public boolean isWritable() {
      return real.isWritable();
    }

    @Override
    public double availability() {
      return real.availability();
    }

    @Override
    public int activeStreams() {
      return real.activeStreams();
    }

    @Override
    public void addListener(ConnectionListener listener) {
      real.addListener(listener);
    }

    @Override
    public void close() {
      real.close();
    }

    @Override
    public void dispose() {
      real.dispose();
    }

    @Override
    public CompletionStage<CloseReason> onClose() {
      return real.onClose();
    }

    @Override
    public boolean isOpen() {
      return real.isOpen();
    }

    @Override
    public boolean isDraining() {
      return real.isDraining();
    }
  }
}
