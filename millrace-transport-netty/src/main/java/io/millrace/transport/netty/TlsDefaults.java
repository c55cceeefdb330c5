package io.millrace.transport.netty;

import java.util.List;

/**
 * The protocol versions and cipher suites every Millrace TLS context allows: TLS 1.3 and 1.2 only,
 * and for 1.2 only forward-secret (ECDHE) suites with authenticated encryption (AES-GCM,
 * ChaCha20-Poly1305), the set HTTP/2 (and so gRPC) requires. Suites the provider lacks are left
 * out, not an error.
 */
final class TlsDefaults {
  static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

  static final List<String> CIPHERS =
      List.of(
          "TLS_AES_128_GCM_SHA256",
          "TLS_AES_256_GCM_SHA384",
          "TLS_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
          "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
          "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
          "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256");

  private TlsDefaults() {}
}
