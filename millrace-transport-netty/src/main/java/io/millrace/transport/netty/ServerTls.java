package io.millrace.transport.netty;

import io.netty.handler.ssl.ApplicationProtocolConfig;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SupportedCipherSuiteFilter;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A server's TLS: its certificate chain and private key from PEM files (PKCS#8 keys; RSA or EC),
 * optionally client certificates checked against a CA (mutual TLS), and the TLS implementation
 * ({@link TlsProvider#AUTO}: OpenSSL when netty-tcnative is on the classpath, else the JDK's). TLS
 * 1.3 and 1.2 only, forward-secret AEAD suites only (see {@code docs/transports.md}).
 *
 * <p>Certificates are replaced without a restart: {@link #reload()} reads the files again and new
 * connections use what it read, while open ones keep theirs; with {@link Builder#reloadEvery} the
 * server checks the files' modification times itself. A reload that fails (a half-written file, a
 * key that does not match) keeps the previous certificate and says why.
 *
 * <pre>{@code
 * ServerTls tls = ServerTls.builder(Path.of("server.pem"), Path.of("server.key"))
 *     .requireClientCertificates(Path.of("clients-ca.pem"))
 *     .reloadEvery(Duration.ofMinutes(1))
 *     .build();
 * MillraceServer.builder().listen("tls://0.0.0.0:7878").tls(tls)...
 * }</pre>
 */
public final class ServerTls {
  private final Path certificateChain;
  private final Path privateKey;
  private final Path clientCa;
  private final ClientAuth clientAuth;
  private final TlsProvider provider;
  private final Duration reloadInterval;
  private volatile Material material;

  /**
   * One reading of the files (their bytes, read once, so that a context and the check of its key
   * see the same certificate), and the contexts made from it (one per ALPN list asked for).
   */
  private static final class Material {
    final byte[] certificateChain;
    final byte[] privateKey;
    final byte[] clientCa;
    final Map<List<String>, SslContext> contexts = new ConcurrentHashMap<>();

    Material(byte[] certificateChain, byte[] privateKey, byte[] clientCa) {
      this.certificateChain = certificateChain;
      this.privateKey = privateKey;
      this.clientCa = clientCa;
    }

    /** Whether the files still hold what this reading got. */
    boolean same(Material other) {
      return Arrays.equals(certificateChain, other.certificateChain)
          && Arrays.equals(privateKey, other.privateKey)
          && Arrays.equals(clientCa, other.clientCa);
    }
  }

  private ServerTls(Builder b) throws IOException {
    this.certificateChain = b.certificateChain;
    this.privateKey = b.privateKey;
    this.clientCa = b.clientCa;
    this.clientAuth = b.clientAuth;
    this.provider = b.provider;
    this.reloadInterval = b.reloadInterval;
    this.material = read(List.of());
  }

  /** TLS with the certificate chain and key in these PEM files. */
  public static Builder builder(Path certificateChain, Path privateKey) {
    return new Builder(certificateChain, privateKey);
  }

  /**
   * Reads the certificate, key and client CA files again; connections accepted from now on use
   * them. Throws, keeping the previous ones, when they cannot be read or do not fit together.
   */
  public synchronized void reload() throws IOException {
    Material old = material;
    material = read(List.copyOf(old.contexts.keySet()));
  }

  /**
   * Reloads when a file's content changed since the last reading (compared byte for byte: a renewal
   * within one tick of a coarse file clock is still seen); returns whether it did.
   */
  synchronized boolean reloadIfChanged() throws IOException {
    Material now = readFiles();
    if (now.same(material)) {
      return false;
    }
    material = build(now, List.copyOf(material.contexts.keySet()));
    return true;
  }

  /** How often the server checks the files for changes; null: never. */
  Duration reloadInterval() {
    return reloadInterval;
  }

  /**
   * Makes the context offering {@code alpn} now, off the event loops (it reads files), so that
   * {@link #context} finds it. A server calls this as it binds.
   */
  synchronized void prepare(List<String> alpn) throws IOException {
    Material m = material;
    if (!m.contexts.containsKey(alpn)) {
      m.contexts.put(List.copyOf(alpn), context(m, alpn));
    }
  }

  /** The context for new connections offering {@code alpn}, {@link #prepare}d before. */
  SslContext context(List<String> alpn) {
    SslContext context = material.contexts.get(alpn);
    if (context == null) {
      throw new IllegalStateException("no TLS context prepared for ALPN " + alpn);
    }
    return context;
  }

  private Material read(List<List<String>> alpnLists) throws IOException {
    return build(readFiles(), alpnLists);
  }

  /**
   * The contexts for {@code alpnLists} (and none) from one reading; fails if any cannot be made.
   */
  private Material build(Material m, List<List<String>> alpnLists) throws IOException {
    m.contexts.put(List.of(), context(m, List.of())); // fails here, not on a connection, if bad
    for (List<String> alpn : alpnLists) {
      m.contexts.put(alpn, context(m, alpn));
    }
    return m;
  }

  private Material readFiles() throws IOException {
    return new Material(
        readFile(certificateChain),
        readFile(privateKey),
        clientCa == null ? null : readFile(clientCa));
  }

  private static byte[] readFile(Path file) throws IOException {
    try {
      return Files.readAllBytes(file);
    } catch (NoSuchFileException e) {
      throw new IOException("TLS file not found: " + file, e);
    }
  }

  private SslContext context(Material m, List<String> alpn) throws IOException {
    try {
      KeyPairCheck.verify(m.certificateChain, m.privateKey);
      SslContextBuilder builder =
          SslContextBuilder.forServer(
                  new ByteArrayInputStream(m.certificateChain),
                  new ByteArrayInputStream(m.privateKey))
              .sslProvider(provider.netty())
              .protocols(TlsDefaults.PROTOCOLS)
              .ciphers(TlsDefaults.CIPHERS, SupportedCipherSuiteFilter.INSTANCE);
      if (m.clientCa != null) {
        builder.trustManager(new ByteArrayInputStream(m.clientCa)).clientAuth(clientAuth);
      }
      if (!alpn.isEmpty()) {
        // A client offering none of these still connects (RSocket has no ALPN name of its own).
        builder.applicationProtocolConfig(
            new ApplicationProtocolConfig(
                ApplicationProtocolConfig.Protocol.ALPN,
                ApplicationProtocolConfig.SelectorFailureBehavior.NO_ADVERTISE,
                ApplicationProtocolConfig.SelectedListenerFailureBehavior.ACCEPT,
                alpn));
      }
      return builder.build();
    } catch (IOException | IllegalArgumentException | java.security.GeneralSecurityException e) {
      throw new IOException(
          "cannot use certificate "
              + certificateChain
              + " with key "
              + privateKey
              + (clientCa == null ? "" : " and client CA " + clientCa)
              + ": "
              + e.getMessage(),
          e);
    }
  }

  /** Configures a {@link ServerTls}. */
  public static final class Builder {
    private final Path certificateChain;
    private final Path privateKey;
    private Path clientCa;
    private ClientAuth clientAuth = ClientAuth.NONE;
    private TlsProvider provider = TlsProvider.AUTO;
    private Duration reloadInterval;

    private Builder(Path certificateChain, Path privateKey) {
      this.certificateChain = Objects.requireNonNull(certificateChain, "certificateChain");
      this.privateKey = Objects.requireNonNull(privateKey, "privateKey");
    }

    /** Mutual TLS: every client must present a certificate issued by a CA in this PEM file. */
    public Builder requireClientCertificates(Path caCertificates) {
      this.clientCa = Objects.requireNonNull(caCertificates);
      this.clientAuth = ClientAuth.REQUIRE;
      return this;
    }

    /**
     * Clients may present a certificate, which must then be issued by a CA in this PEM file;
     * clients without one are accepted too.
     */
    public Builder acceptClientCertificates(Path caCertificates) {
      this.clientCa = Objects.requireNonNull(caCertificates);
      this.clientAuth = ClientAuth.OPTIONAL;
      return this;
    }

    public Builder provider(TlsProvider provider) {
      this.provider = Objects.requireNonNull(provider);
      return this;
    }

    /** Checks the files this often and reloads them when they changed. Default: never. */
    public Builder reloadEvery(Duration interval) {
      if (interval.isNegative() || interval.isZero()) {
        throw new IllegalArgumentException("the reload interval must be positive");
      }
      this.reloadInterval = interval;
      return this;
    }

    /** Reads the files; throws when they cannot be read or do not fit together. */
    public ServerTls build() throws IOException {
      return new ServerTls(this);
    }
  }
}
