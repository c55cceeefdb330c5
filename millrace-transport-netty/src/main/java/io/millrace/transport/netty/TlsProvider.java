package io.millrace.transport.netty;

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

/** Which TLS implementation encrypts connections. */
public enum TlsProvider {
  /**
   * OpenSSL (BoringSSL, through netty-tcnative-boringssl-static) when on the classpath, else JDK.
   */
  AUTO,
  /** OpenSSL through netty-tcnative; fails when it is not on the classpath. */
  OPENSSL,
  /** The JDK's own TLS. */
  JDK;

  SslProvider netty() {
    switch (this) {
      case OPENSSL:
        if (!OpenSsl.isAvailable()) {
          throw new IllegalStateException(
              "OpenSSL TLS needs io.netty:netty-tcnative-boringssl-static on the classpath",
              OpenSsl.unavailabilityCause());
        }
        return SslProvider.OPENSSL;
      case JDK:
        return SslProvider.JDK;
      default:
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }
  }
}
