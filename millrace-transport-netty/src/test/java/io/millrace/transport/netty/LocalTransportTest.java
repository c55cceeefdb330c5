package io.millrace.transport.netty;

/** The transport suite over in-JVM channels. */
class LocalTransportTest extends UriTransportSuite {
  @Override
  protected String listenUri() {
    return "local://" + localName();
  }
}
