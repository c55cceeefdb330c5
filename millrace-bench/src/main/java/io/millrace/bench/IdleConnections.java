package io.millrace.bench;

/** Connections a {@link BenchSystem} opened for the idle-connections scenario. */
public interface IdleConnections extends AutoCloseable {

  /** How many are open. */
  int open();

  /**
   * Opens one more connection, makes one request-response on it and closes it; returns the time
   * from the start of the connect to the response, in microseconds.
   */
  long probeMicros() throws Exception;

  @Override
  void close();
}
