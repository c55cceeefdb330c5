package io.millrace.bench.millrace;

import io.grpc.CallOptions;
import io.grpc.MethodDescriptor;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.millrace.bench.Interaction;
import io.millrace.bench.v1.BenchMessage;
import io.millrace.bench.v1.BenchServiceRpc;
import io.millrace.grpc.MillraceChannel;
import io.millrace.rpc.RpcClient;
import io.millrace.rpc.ServiceDefinition;
import java.util.concurrent.atomic.LongAdder;

/**
 * grpc-java's client code over a Millrace connection ({@link MillraceChannel}): the calls a
 * grpc-java async stub makes ({@link ClientCalls} with grpc-protobuf's marshaller, as generated
 * stubs marshal), against the Millrace RPC server of {@code millrace-rpc}. It measures what a team
 * gets by moving its grpc-java stubs onto Millrace unchanged; compare with grpc-java-rpc, the same
 * calls over grpc-java's own transport.
 *
 * <p>Request-stream and request-channel consume in batches of 256 with manual flow control, as the
 * grpc-java systems do; the channel's client sends while {@code isReady()} and resumes on ready.
 * Fire-and-forget is not measured: gRPC has none, and bench.proto's Send is Millrace's.
 */
public final class MillraceGrpcStubsSystem extends RpcFlavourSystem {
  private static final int BATCH = 256;

  private static final MethodDescriptor.Marshaller<BenchMessage> MESSAGES =
      ProtoUtils.marshaller(BenchMessage.getDefaultInstance());

  private static MethodDescriptor<BenchMessage, BenchMessage> method(
      io.millrace.rpc.MethodDescriptor<?, ?> m, MethodDescriptor.MethodType type) {
    return MethodDescriptor.newBuilder(MESSAGES, MESSAGES)
        .setFullMethodName(m.fullName())
        .setType(type)
        .build();
  }

  private static final MethodDescriptor<BenchMessage, BenchMessage> ECHO =
      method(BenchServiceRpc.ECHO, MethodDescriptor.MethodType.UNARY);
  private static final MethodDescriptor<BenchMessage, BenchMessage> STREAM =
      method(BenchServiceRpc.STREAM, MethodDescriptor.MethodType.SERVER_STREAMING);
  private static final MethodDescriptor<BenchMessage, BenchMessage> CHANNEL =
      method(BenchServiceRpc.CHANNEL, MethodDescriptor.MethodType.BIDI_STREAMING);

  private static final java.util.concurrent.atomic.AtomicBoolean FAILED =
      new java.util.concurrent.atomic.AtomicBoolean();

  /** The first failed call goes to the process log: a run whose calls fail measures nothing. */
  private static void failed(Throwable t) {
    if (FAILED.compareAndSet(false, true)) {
      System.err.println("millrace-grpc-stubs client: call failed: " + t);
      t.printStackTrace();
    }
  }

  @Override
  public String name() {
    return "millrace-grpc-stubs";
  }

  @Override
  public boolean supports(Interaction interaction) {
    return interaction != Interaction.FIRE_AND_FORGET;
  }

  @Override
  ServiceDefinition service(BenchMessage reply, LongAdder handled) {
    return MillraceRpcSystem.reactorService(reply, handled);
  }

  @Override
  Calls calls(RpcClient rpc, BenchMessage request) {
    MillraceChannel channel = MillraceChannel.of(rpc);
    return new Calls() {
      @Override
      void requestResponse(Runnable onResponse) {
        ClientCalls.asyncUnaryCall(
            channel.newCall(ECHO, CallOptions.DEFAULT),
            request,
            new StreamObserver<>() {
              @Override
              public void onNext(BenchMessage value) {}

              @Override
              public void onError(Throwable t) {
                failed(t);
              }

              @Override
              public void onCompleted() {
                onResponse.run();
              }
            });
      }

      @Override
      void fireAndForget() {
        throw new UnsupportedOperationException("gRPC has no fire-and-forget");
      }

      @Override
      void startStream(LongAdder received) {
        Batching consumer = new Batching(received, null);
        onStop(consumer::cancel);
        ClientCalls.asyncServerStreamingCall(
            channel.newCall(STREAM, CallOptions.DEFAULT), request, consumer);
      }

      @Override
      void startChannel(LongAdder received) {
        Batching consumer = new Batching(received, request);
        onStop(consumer::cancel);
        ClientCalls.asyncBidiStreamingCall(channel.newCall(CHANNEL, CallOptions.DEFAULT), consumer);
      }
    };
  }

  /**
   * Consumes in batches (manual flow control); for a channel, also sends {@code toSend} while the
   * call is ready.
   */
  private static final class Batching
      implements ClientResponseObserver<BenchMessage, BenchMessage>, Runnable {
    private final LongAdder received;
    private final BenchMessage toSend;
    private ClientCallStreamObserver<BenchMessage> call;
    private int inBatch;
    private volatile boolean cancelled;

    Batching(LongAdder received, BenchMessage toSend) {
      this.received = received;
      this.toSend = toSend;
    }

    @Override
    public void beforeStart(ClientCallStreamObserver<BenchMessage> call) {
      this.call = call;
      call.disableAutoRequestWithInitial(BATCH);
      if (toSend != null) {
        call.setOnReadyHandler(this);
      }
    }

    /** On ready: send while the server's credit lasts. */
    @Override
    public void run() {
      while (!cancelled && call.isReady()) {
        call.onNext(toSend);
      }
    }

    @Override
    public void onNext(BenchMessage value) {
      received.increment();
      if (++inBatch == BATCH) {
        inBatch = 0;
        call.request(BATCH);
      }
    }

    @Override
    public void onError(Throwable t) {
      if (!cancelled) {
        failed(t);
      }
    }

    @Override
    public void onCompleted() {}

    void cancel() {
      cancelled = true;
      if (call != null) {
        call.cancel("the run ended", null);
      }
    }
  }
}
