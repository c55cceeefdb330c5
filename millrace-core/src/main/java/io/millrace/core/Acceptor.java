package io.millrace.core;

/**
 * Decides, on the server, whether to accept a connection's SETUP and which {@link Responder} serves
 * it. Called once per connection on its event loop; use {@link AsyncAcceptor} for decisions that
 * wait on something else.
 *
 * <p>Throw {@link SetupException} to reject the connection with its error code (REJECTED_SETUP,
 * UNSUPPORTED_SETUP, INVALID_SETUP); returning null rejects it with REJECTED_SETUP. The acceptor
 * may start requests to the client on {@code connection} before it returns.
 */
@FunctionalInterface
public interface Acceptor {

  Responder accept(ConnectionSetup setup, Connection connection);
}
