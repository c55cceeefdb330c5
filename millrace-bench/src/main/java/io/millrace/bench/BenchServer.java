package io.millrace.bench;

/** A running server of a {@link BenchSystem}. */
public interface BenchServer extends AutoCloseable {
  /** Stops the server and its event loops. */
  @Override
  void close();
}
