package io.millrace.observer;

import io.millrace.core.Connection;
import io.millrace.core.internal.Signatures;
import io.millrace.observer.internal.ObserverCall;
import io.millrace.observer.internal.OneResponse;
import io.millrace.streams.Payload;
import io.millrace.streams.ReactiveRequester;
import io.millrace.streams.StreamsOptions;
import io.netty.buffer.ByteBuf;
import java.lang.System.Logger.Level;

/**
 * Starts calls in the gRPC style: responses come to a {@link StreamObserver}; a channel returns the
 * observer its requests are sent through.
 *
 * <p>A response observer that is a {@link ClientResponseObserver} is handed its call first: to
 * cancel it later, to take inbound flow control in hand ({@link
 * CallStreamObserver#disableAutoInboundFlowControl()}; RSocket sends a stream's request with its
 * first credit, so such a call starts with the first {@link CallStreamObserver#request(int)}), or
 * to follow a channel's readiness. Responses arrive on the connection's event loop: do not block in
 * the observer. Received payloads are heap copies by default and need no release; sent ones belong
 * to Millrace.
 */
public final class ObserverRequester {
  static {
    Signatures.resolve(
        ObserverRequester.class,
        ObserverCall.class,
        OneResponse.class); // so that C2 may inline calls to their methods
  }

  private static final System.Logger LOG = System.getLogger(ObserverRequester.class.getName());

  private final ReactiveRequester requester;

  private ObserverRequester(ReactiveRequester requester) {
    this.requester = requester;
  }

  public static ObserverRequester of(Connection connection) {
    return new ObserverRequester(ReactiveRequester.of(connection));
  }

  public static ObserverRequester of(Connection connection, StreamsOptions options) {
    return new ObserverRequester(ReactiveRequester.of(connection, options));
  }

  public Connection connection() {
    return requester.connection();
  }

  /**
   * Sends {@code payload} (ownership taken), straight to the connection: no Publisher, no
   * subscriber. Returns false, the payload released and nothing sent, when the connection refuses
   * it (on the event loop: closing, or no lease; a reconnecting connection also off the loop): the
   * caller is the only one who can act on that, as a fire-and-forget has no call to fail (also
   * logged at DEBUG). True means sent, or handed over to be sent (off the loop, or waiting for a
   * reconnect), a failure after that being logged where it happens. From another thread it throws
   * {@link io.millrace.core.NoRoomException} when the hand-off to the loop has no room (nothing
   * sent): wait for {@link Connection#isReadyForCalls()} and send again.
   */
  public boolean fireAndForget(Payload payload) {
    if (payload == null) {
      throw new NullPointerException("payload");
    }
    if (!requester.connection().fireAndForget(payload.metadata(), payload.data())) {
      LOG.log(Level.DEBUG, "fire-and-forget not sent: the connection is closing or has no lease");
      return false;
    }
    return true;
  }

  /**
   * Sends connection-level metadata (ownership taken), straight to the connection, as {@link
   * #fireAndForget} sends: dropped (released) when the connection is closing, and from another
   * thread {@link io.millrace.core.NoRoomException} when the hand-off to its event loop has no
   * room.
   */
  public void metadataPush(ByteBuf metadata) {
    if (metadata == null) {
      throw new NullPointerException("metadata");
    }
    requester.connection().metadataPush(metadata);
  }

  /** The answer as one onNext (none for an empty answer) and onCompleted, or onError. */
  public void requestResponse(Payload payload, StreamObserver<Payload> response) {
    if (response instanceof ClientResponseObserver) {
      ObserverCall<Payload, Payload> call = startSending(payload, response);
      requester.requestResponse(payload).subscribe(call.inbound());
      return;
    }
    if (response == null) {
      if (payload != null) {
        payload.release(); // refused before it is sent: it was the call's to release
      }
      throw new NullPointerException("response");
    }
    // Nothing to steer: one object instead of a call's sending, credit and cancel state.
    requester
        .requestResponse(payload)
        .subscribe(new OneResponse<>(response, ObserverCall.PAYLOADS));
  }

  public void requestStream(Payload payload, StreamObserver<Payload> responses) {
    ObserverCall<Payload, Payload> call = startSending(payload, responses);
    requester.requestStream(payload).subscribe(call.inbound());
  }

  /**
   * Opens a channel: the returned observer (a {@link ClientCallStreamObserver}) sends its values,
   * the first of which opens the channel; {@code onCompleted} ends this side's half. Sending is
   * held to the responder's credit: see {@link CallStreamObserver}.
   */
  public ClientCallStreamObserver<Payload> requestChannel(StreamObserver<Payload> responses) {
    ObserverCall<Payload, Payload> call = start(responses, true);
    requester.requestChannel(call.outbound()).subscribe(call.inbound());
    return call;
  }

  /**
   * {@link #start} for a call that sends {@code payload}: a {@code beforeStart} that throws (or a
   * null observer) refuses the call before the payload is sent, and the payload, the call's from
   * the start, is released.
   */
  private ObserverCall<Payload, Payload> startSending(
      Payload payload, StreamObserver<Payload> responses) {
    try {
      return start(java.util.Objects.requireNonNull(responses, "responses"), false);
    } catch (Throwable e) {
      if (payload != null) {
        payload.release();
      }
      throw e;
    }
  }

  @SuppressWarnings("unchecked")
  private ObserverCall<Payload, Payload> start(StreamObserver<Payload> responses, boolean sends) {
    ObserverCall<Payload, Payload> call =
        new ObserverCall<>(
            requester.connection().executor(),
            ObserverCall.PAYLOADS,
            requester.options().prefetch(),
            sends,
            true);
    call.receiveWith(responses);
    if (responses instanceof ClientResponseObserver) {
      ((ClientResponseObserver<Payload, Payload>) responses).beforeStart(call);
    }
    call.fixFlowControl();
    return call;
  }
}
