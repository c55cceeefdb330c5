package io.millrace.transport.netty;

import io.netty.channel.local.LocalAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;
import java.util.Objects;

/**
 * Where a server listens or a client connects: {@code tcp://H:P}, {@code tls://H:P}, {@code
 * ws://H:P/PATH}, {@code wss://H:P/PATH}, {@code unix:///path/to/socket} or {@code local://NAME}
 * (in-JVM, no socket). A WebSocket URI without a path means {@value #DEFAULT_WEBSOCKET_PATH}; ws
 * and wss default to ports 80 and 443, tcp and tls have no default.
 */
public final class TransportUri {
  /** The WebSocket path when a URI gives none, as rsocket-java's examples use. */
  public static final String DEFAULT_WEBSOCKET_PATH = "/rsocket";

  /** The kinds of transport a URI names. */
  public enum Scheme {
    TCP(false, false),
    TLS(true, false),
    WS(false, true),
    WSS(true, true),
    UNIX(false, false),
    LOCAL(false, false);

    private final boolean secure;
    private final boolean webSocket;

    Scheme(boolean secure, boolean webSocket) {
      this.secure = secure;
      this.webSocket = webSocket;
    }

    /** Whether connections are encrypted (tls, wss). */
    public boolean secure() {
      return secure;
    }

    /** Whether frames travel as WebSocket messages (ws, wss). */
    public boolean webSocket() {
      return webSocket;
    }

    /** Whether the scheme runs over an IP socket (tcp, tls, ws, wss). */
    public boolean ip() {
      return this != UNIX && this != LOCAL;
    }

    @Override
    public String toString() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Scheme scheme;
  private final String host;
  private final int port;
  private final String path;

  private TransportUri(Scheme scheme, String host, int port, String path) {
    this.scheme = scheme;
    this.host = host;
    this.port = port;
    this.path = path;
  }

  /** Parses {@code uri}; throws {@link IllegalArgumentException} saying what is wrong with it. */
  public static TransportUri parse(String uri) {
    Objects.requireNonNull(uri, "uri");
    URI parsed;
    try {
      parsed = new URI(uri.trim());
    } catch (URISyntaxException e) {
      throw new IllegalArgumentException("not a URI: " + uri + " (" + e.getReason() + ")", e);
    }
    String schemeName = parsed.getScheme();
    if (schemeName == null) {
      throw new IllegalArgumentException(
          "no scheme in '" + uri + "' (expected tcp, tls, ws, wss, unix or local)");
    }
    Scheme scheme;
    try {
      scheme = Scheme.valueOf(schemeName.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "unknown scheme '"
              + schemeName
              + "' in '"
              + uri
              + "' (expected tcp, tls, ws, wss, unix"
              + " or local)");
    }
    switch (scheme) {
      case UNIX:
        {
          String path = parsed.getPath();
          if (parsed.getAuthority() != null || path == null || path.isEmpty()) {
            throw new IllegalArgumentException(
                "a unix URI is unix:///absolute/path or unix:relative/path, not '" + uri + "'");
          }
          return new TransportUri(scheme, null, -1, path);
        }
      case LOCAL:
        {
          String name = parsed.getAuthority();
          if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("a local URI is local://NAME, not '" + uri + "'");
          }
          return new TransportUri(scheme, name, -1, null);
        }
      default:
        {
          String host = parsed.getHost();
          if (host == null) {
            throw new IllegalArgumentException("no host in '" + uri + "'");
          }
          if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
          }
          int port = parsed.getPort();
          if (port < 0) {
            if (scheme == Scheme.WS) {
              port = 80;
            } else if (scheme == Scheme.WSS) {
              port = 443;
            } else {
              throw new IllegalArgumentException("no port in '" + uri + "'");
            }
          }
          String path = null;
          if (scheme.webSocket()) {
            path = parsed.getRawPath();
            if (path == null || path.isEmpty()) {
              path = DEFAULT_WEBSOCKET_PATH;
            }
            if (parsed.getRawQuery() != null) {
              path = path + "?" + parsed.getRawQuery();
            }
          } else if (parsed.getRawPath() != null
              && !parsed.getRawPath().isEmpty()
              && !parsed.getRawPath().equals("/")) {
            throw new IllegalArgumentException("a " + scheme + " URI has no path: '" + uri + "'");
          }
          return new TransportUri(scheme, host, port, path);
        }
    }
  }

  /** A {@code tcp://host:port} URI. */
  public static TransportUri tcp(String host, int port) {
    return new TransportUri(Scheme.TCP, Objects.requireNonNull(host), port, null);
  }

  public Scheme scheme() {
    return scheme;
  }

  /** The host of an IP scheme, the name of a local one; null for unix. */
  public String host() {
    return host;
  }

  /** The port of an IP scheme, else -1. */
  public int port() {
    return port;
  }

  /**
   * The WebSocket request path (with its query, if any) for ws and wss, the socket file for unix,
   * else null.
   */
  public String path() {
    return path;
  }

  /** This URI with another port (a server bound to port 0 reports the one it got). */
  public TransportUri withPort(int port) {
    return new TransportUri(scheme, host, port, path);
  }

  /**
   * The address to bind or connect to: an unresolved {@link InetSocketAddress} for IP schemes (so
   * that a client resolves the name on each connect), for unix the domain socket address {@code
   * kind} takes (Netty's own for the native kinds, the JDK's for NIO), a {@link LocalAddress} for
   * local.
   */
  SocketAddress socketAddress(IoKind kind) {
    switch (scheme) {
      case UNIX:
        return kind.domainSocketAddress(path);
      case LOCAL:
        return new LocalAddress(host);
      default:
        return InetSocketAddress.createUnresolved(host, port);
    }
  }

  @Override
  public String toString() {
    switch (scheme) {
      case UNIX:
        return path.startsWith("/") ? "unix://" + path : "unix:" + path;
      case LOCAL:
        return "local://" + host;
      default:
        String h = host.indexOf(':') >= 0 ? "[" + host + "]" : host;
        return scheme + "://" + h + ":" + port + (path == null ? "" : path);
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TransportUri && toString().equals(o.toString());
  }

  @Override
  public int hashCode() {
    return toString().hashCode();
  }
}
