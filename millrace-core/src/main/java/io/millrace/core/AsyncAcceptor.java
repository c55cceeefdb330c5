package io.millrace.core;

import java.util.concurrent.CompletionStage;

/**
 * An {@link Acceptor} that decides later, for example after asking an authentication service,
 * without blocking the event loop. Called once per connection on its event loop; the stage may
 * complete on any thread.
 *
 * <p>Until the stage completes the connection reads nothing more from the client (its requests wait
 * in the socket, within the server's setup timeout) but requests this side starts on {@code
 * connection} go out at once. Completing with a {@link Responder} accepts the connection;
 * completing with null or a {@link SetupException} rejects it with REJECTED_SETUP or the
 * exception's code; any other failure rejects it with REJECTED_SETUP and a fixed message.
 *
 * <p>{@code setup}'s metadata and data are valid only during the call: copy what the decision
 * needs, or keep a {@code retainedSlice()}.
 */
@FunctionalInterface
public interface AsyncAcceptor {

  CompletionStage<Responder> accept(ConnectionSetup setup, Connection connection);
}
