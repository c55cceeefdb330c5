package io.millrace.rpc;

import io.millrace.core.internal.Signatures;
import io.millrace.observer.ClientCallStreamObserver;
import io.millrace.observer.ClientResponseObserver;
import io.millrace.observer.ServerCallStreamObserver;
import io.millrace.observer.StreamObserver;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.observer.internal.OneResponse;
import io.millrace.observer.internal.StreamHandlers;
import io.millrace.streams.internal.Payloads;
import java.lang.System.Logger.Level;
import java.util.function.Consumer;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * What the generated StreamObserver flavour stands on: calls and handlers in grpc-java's style over
 * the same Publishers every flavour uses, with the observer module's flow control (see {@link
 * io.millrace.observer.CallStreamObserver}): {@code isReady} and an on-ready handler for sending at
 * the peer's pace, {@code onNext} past the peer's credit held to a bound (a producer off the event
 * loop waits, one on it fails the call with RESOURCE_EXHAUSTED), automatic inbound flow control
 * that can be switched to manual {@code request(n)}.
 *
 * <p>Failures reach observers as {@link StatusException}s; a handler's {@code onError} with a
 * StatusException sends its status, any other exception UNKNOWN (as in the other flavours).
 */
public final class Observers {
  static {
    Signatures.resolve(Observers.class); // so that C2 may inline calls to their methods
  }

  private static final System.Logger LOG = System.getLogger(Observers.class.getName());

  private Observers() {}

  /** Messages need no release; a cancelled call is CANCELLED, an overrun RESOURCE_EXHAUSTED. */
  static final ObserverCall.Rules MESSAGES =
      new ObserverCall.Rules() {
        @Override
        public void release(Object value) {}

        @Override
        public RuntimeException cancelled(String message) {
          return Status.CANCELLED.withMessage(message).asException();
        }

        @Override
        public RuntimeException overrun(String message) {
          return Status.RESOURCE_EXHAUSTED.withMessage(message).asException();
        }

        @Override
        public RuntimeException rejected(String message) {
          return Status.UNAVAILABLE.withMessage(message).asException(); // worth a retry elsewhere
        }

        @Override
        public long length(Object value) {
          // A protobuf message's size is computed once and kept: its encoding reads it again.
          return value instanceof com.google.protobuf.MessageLite m ? m.getSerializedSize() : -1;
        }
      };

  // ------------------------------------------------------------------ server

  /**
   * The answer of a unary or server-streaming method: {@code handler} is given the response
   * observer when the server subscribes to the answer; a unary method's handler runs at once, and
   * its response observer is a {@code UnaryObserver} ({@link UnaryResponse}). A server-streaming
   * handler subscribed on the event loop (the server has no handler executor) runs on the shared
   * stream-handler executor ({@link StreamHandlers}), so that one that calls {@code onNext} in a
   * loop is held back by the caller's credit; its response observer's callbacks still come on the
   * loop.
   */
  public static <Resp> Publisher<Resp> serve(
      ServerContext context, Consumer<ServerCallStreamObserver<Resp>> handler) {
    MethodDescriptor<?, ?> method = context.method();
    if (method != null && method.type() == MethodDescriptor.Type.UNARY) {
      return UnaryResponse.answer(context, handler); // one response: no flow control to keep
    }
    ObserverCall<Resp, Void> call = serverCall(context);
    return call.serving(() -> handler.accept(call), context.streamHandlers(), () -> {});
  }

  /**
   * The answer of a client- or bidirectional-streaming method: {@code handler} is given the
   * response observer and returns the observer the caller's requests go to, read from then on (the
   * response observer's {@code disableAutoInboundFlowControl} and {@code request(n)} steer that
   * reading). A bidirectional handler runs off the event loop as a server-streaming one does; a
   * client-streaming one, which answers once, where it is called.
   */
  public static <Req, Resp> Publisher<Resp> serveStreaming(
      ServerContext context,
      Publisher<Req> requests,
      Function<ServerCallStreamObserver<Resp>, StreamObserver<Req>> handler) {
    ObserverCall<Resp, Req> call = serverCall(context);
    call.holdEndUntilReceiving();
    MethodDescriptor<?, ?> method = context.method();
    Runnable invoke =
        () -> {
          StreamObserver<Req> observer = handler.apply(call);
          if (observer == null) {
            throw Status.INTERNAL
                .withMessage("the handler returned no observer for the requests")
                .asException();
          }
          call.receiveWith(observer);
          call.receive(requests); // on the loop, wherever the handler ran
        };
    return method != null && method.type() == MethodDescriptor.Type.CLIENT_STREAMING
        ? call.serving(invoke) // one response: nothing for the handler to be held back on
        : call.serving(invoke, context.streamHandlers(), () -> Payloads.cancelUnread(requests));
  }

  private static <S, R> ObserverCall<S, R> serverCall(ServerContext context) {
    return new ObserverCall<>(context.loop(), MESSAGES, context.prefetch(), true, false);
  }

  /** A fire-and-forget method's end once its handler returned. */
  public static Publisher<Void> done() {
    return Publishers.empty();
  }

  // ------------------------------------------------------------------ client

  /**
   * Starts a unary or server-streaming call: its responses go to {@code responses} (on the
   * connection's event loop: do not block there). A {@link ClientResponseObserver} is handed the
   * call first, to cancel it or to request responses by hand.
   */
  public static <Req, Resp> void call(
      RpcClient rpc, StreamObserver<Resp> responses, Publisher<Resp> call) {
    if (call instanceof UnaryCall && !(responses instanceof ClientResponseObserver)) {
      if (rpc == null) {
        throw new NullPointerException("rpc");
      }
      // Nothing to steer: no flow control to keep.
      call.subscribe(new OneResponse<>(responses, MESSAGES));
      return;
    }
    ObserverCall<Req, Resp> c = clientCall(rpc, responses, false);
    call.subscribe(c.inbound());
  }

  /**
   * Starts a client- or bidirectional-streaming call made by {@code call} from the Publisher of its
   * requests; returns the observer the requests are sent through (held to the server's credit, see
   * {@link io.millrace.observer.CallStreamObserver}), whose {@code onCompleted} ends them.
   */
  public static <Req, Resp> ClientCallStreamObserver<Req> callStreaming(
      RpcClient rpc,
      StreamObserver<Resp> responses,
      Function<Publisher<Req>, Publisher<Resp>> call) {
    ObserverCall<Req, Resp> c = clientCall(rpc, responses, true);
    call.apply(c.outbound()).subscribe(c.inbound());
    return c;
  }

  @SuppressWarnings("unchecked")
  private static <Req, Resp> ObserverCall<Req, Resp> clientCall(
      RpcClient rpc, StreamObserver<Resp> responses, boolean sends) {
    if (responses == null) {
      throw new NullPointerException("responses");
    }
    ObserverCall<Req, Resp> c =
        new ObserverCall<>(rpc.loop(), MESSAGES, rpc.prefetch(), sends, true);
    c.receiveWith(responses);
    if (responses instanceof ClientResponseObserver) {
      ((ClientResponseObserver<Req, Resp>) responses).beforeStart(c);
    }
    c.fixFlowControl();
    return c;
  }

  /**
   * Sends a fire-and-forget call. Nothing answers it; a call that cannot be sent (the connection is
   * closing, has no lease, or its hand-off is full) is logged, as nobody else can be told. The
   * futures flavour's {@code ...Async} method says whether it was sent.
   */
  public static void fireAndForget(Publisher<Void> call) {
    call.subscribe(
        new Subscriber<Void>() {
          @Override
          public void onSubscribe(Subscription s) {
            s.request(1);
          }

          @Override
          public void onNext(Void unused) {}

          @Override
          public void onError(Throwable t) {
            LOG.log(Level.DEBUG, "fire-and-forget not sent: " + t);
          }

          @Override
          public void onComplete() {}
        });
  }
}
