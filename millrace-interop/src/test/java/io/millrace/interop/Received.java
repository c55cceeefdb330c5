package io.millrace.interop;

/**
 * One payload as the receiving side saw it, decoded as UTF-8; {@code metadata} null when absent.
 */
record Received(String data, String metadata) {

  static Received of(String data) {
    return new Received(data, null);
  }

  static Received of(String data, String metadata) {
    return new Received(data, metadata);
  }
}
