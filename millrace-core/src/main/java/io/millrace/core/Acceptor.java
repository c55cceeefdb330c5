package io.millrace.core;

/**
 * Decides, on the server, whether to accept a connection's SETUP and which {@link Responder} serves
 * it. Called once per connection on its event loop.
 *
 * <p>Throw {@link SetupException} to reject the connection with its error code (REJECTED_SETUP,
 * UNSUPPORTED_SETUP, INVALID_SETUP); returning null rejects it with REJECTED_SETUP.
 */
@FunctionalInterface
public interface Acceptor {

  Responder accept(ConnectionSetup setup, Connection connection);
}
