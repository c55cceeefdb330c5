package io.millrace.transport.netty;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * WebSocket settings beyond the URI's path.
 *
 * <p>Server: {@link Builder#subprotocols} the server speaks (when set, a client must ask for one of
 * them, else the upgrade is refused with 400; unset, any request is accepted and none chosen, as
 * rsocket-java and rsocket-js expect) and the browser origins allowed ({@link
 * Builder#allowedOrigins}; unset, any; a request without an {@code Origin} header, from a
 * non-browser client, is always allowed). A request for another path gets 404.
 *
 * <p>Client: the {@link Builder#subprotocols} it offers (the server picks one) and extra {@link
 * Builder#header}s for the upgrade request, such as an authorization token.
 */
public final class WebSocketOptions {
  /** Accept every request for the path, choose no subprotocol, send no extra headers. */
  public static final WebSocketOptions DEFAULT = builder().build();

  private final List<String> subprotocols;
  private final List<String> allowedOrigins;
  private final Map<String, String> headers;

  private WebSocketOptions(Builder b) {
    this.subprotocols = List.copyOf(b.subprotocols);
    this.allowedOrigins = List.copyOf(b.allowedOrigins);
    this.headers = Map.copyOf(b.headers);
  }

  public static Builder builder() {
    return new Builder();
  }

  public List<String> subprotocols() {
    return subprotocols;
  }

  public List<String> allowedOrigins() {
    return allowedOrigins;
  }

  public Map<String, String> headers() {
    return headers;
  }

  /** Whether a browser on {@code origin} (null: not a browser) may connect. */
  boolean allowsOrigin(String origin) {
    if (origin == null || allowedOrigins.isEmpty()) {
      return true;
    }
    String o = origin.toLowerCase(Locale.ROOT);
    for (String allowed : allowedOrigins) {
      if (allowed.equals(o)) {
        return true;
      }
    }
    return false;
  }

  /** Configures {@link WebSocketOptions}. */
  public static final class Builder {
    private final List<String> subprotocols = new ArrayList<>();
    private final List<String> allowedOrigins = new ArrayList<>();
    private final Map<String, String> headers = new LinkedHashMap<>();

    private Builder() {}

    public Builder subprotocols(String... subprotocols) {
      for (String s : subprotocols) {
        if (s.isBlank() || s.indexOf(',') >= 0) {
          throw new IllegalArgumentException("not a subprotocol name: '" + s + "'");
        }
        this.subprotocols.add(s.trim());
      }
      return this;
    }

    /** Origins such as {@code https://app.example.com}, compared without case. */
    public Builder allowedOrigins(String... origins) {
      for (String o : origins) {
        this.allowedOrigins.add(Objects.requireNonNull(o).trim().toLowerCase(Locale.ROOT));
      }
      return this;
    }

    /** A header a client adds to its upgrade request. */
    public Builder header(String name, String value) {
      this.headers.put(Objects.requireNonNull(name), Objects.requireNonNull(value));
      return this;
    }

    public WebSocketOptions build() {
      return new WebSocketOptions(this);
    }
  }
}
