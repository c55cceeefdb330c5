package io.millrace.core;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings and limits of one connection, immutable. Every limit is on by default; the defaults suit
 * service-to-service traffic.
 *
 * <p>Worst case. With the defaults, the memory a peer can make one connection hold is at most: 32
 * MiB of fragmented messages being reassembled ({@link #maxReassemblyBytesPerConnection()}, real
 * buffer capacity), plus 4 MiB queued for a peer that does not read ({@link #maxQueuedBytes()}; one
 * frame's handler may write more before reading stops, as much as the application chooses to), plus
 * one partial inbound frame ({@link #maxFrameLength()}, 1 MiB) and one socket read, plus 4 MiB of
 * calls from other threads waiting for the loop ({@link #maxQueuedCallBytes()}), plus 64 MiB of
 * received messages waiting for readers that have not taken them ({@link #maxUnreadBytes()}), plus
 * about 200 bytes for each of the {@link #maxConcurrentStreams()} (4,096) streams the peer may
 * open: about 106 MiB. A server multiplies the non-reassembly part (about 74 MiB) by its
 * connections and adds its server-wide reassembly budget (256 MiB by default) once; bound the
 * product with the server's maximum connection count. Not in that figure: what the application
 * holds or queues itself, RPC calls' first messages waiting for a handler executor's thread, and a
 * parsed message's heap beyond its wire size (docs/design.md lists them). An idle connection holds
 * a few KiB (docs/benchmarks.md measures it).
 *
 * <pre>{@code
 * ConnectionConfig config = ConnectionConfig.builder()
 *     .keepAlive(Duration.ofSeconds(20), Duration.ofSeconds(90))
 *     .fragmentSize(64 * 1024)
 *     .build();
 * }</pre>
 */
public final class ConnectionConfig {
  /** The default: every setting at its documented default. */
  public static final ConnectionConfig DEFAULT = builder().build();

  private final String metadataMimeType;
  private final String dataMimeType;
  private final Duration keepAliveInterval;
  private final Duration maxLifetime;
  private final boolean lease;
  private final LeaseIssuer leaseIssuer;
  private final int fragmentSize;
  private final int maxFrameLength;
  private final int maxReassembledLength;
  private final long maxReassemblyBytesPerConnection;
  private final int maxConcurrentStreams;
  private final Duration setupTimeout;
  private final int maxInboundKeepAlivesPerSecond;
  private final int maxInboundMetadataPushesPerSecond;
  private final long maxQueuedBytes;
  private final boolean errorMessagesFromHandlers;
  private final Duration drainTimeout;
  private final long maxQueuedCallBytes;
  private final long maxUnreadBytes;
  private final Resumption resumption;
  private final Reconnect reconnect;

  private ConnectionConfig(Builder b) {
    this.metadataMimeType = b.metadataMimeType;
    this.dataMimeType = b.dataMimeType;
    this.keepAliveInterval = b.keepAliveInterval;
    this.maxLifetime = b.maxLifetime;
    this.lease = b.lease;
    this.leaseIssuer = b.leaseIssuer;
    this.fragmentSize = b.fragmentSize;
    this.maxFrameLength = b.maxFrameLength;
    this.maxReassembledLength = b.maxReassembledLength;
    this.maxReassemblyBytesPerConnection = b.maxReassemblyBytesPerConnection;
    this.maxConcurrentStreams = b.maxConcurrentStreams;
    this.setupTimeout = b.setupTimeout;
    this.maxInboundKeepAlivesPerSecond = b.maxInboundKeepAlivesPerSecond;
    this.maxInboundMetadataPushesPerSecond = b.maxInboundMetadataPushesPerSecond;
    this.maxQueuedBytes = b.maxQueuedBytes;
    this.errorMessagesFromHandlers = b.errorMessagesFromHandlers;
    this.drainTimeout = b.drainTimeout;
    this.maxQueuedCallBytes = b.maxQueuedCallBytes;
    this.maxUnreadBytes = b.maxUnreadBytes;
    this.resumption = b.resumption;
    this.reconnect = b.reconnect;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.metadataMimeType = metadataMimeType;
    b.dataMimeType = dataMimeType;
    b.keepAliveInterval = keepAliveInterval;
    b.maxLifetime = maxLifetime;
    b.lease = lease;
    b.leaseIssuer = leaseIssuer;
    b.fragmentSize = fragmentSize;
    b.maxFrameLength = maxFrameLength;
    b.maxReassembledLength = maxReassembledLength;
    b.maxReassemblyBytesPerConnection = maxReassemblyBytesPerConnection;
    b.maxConcurrentStreams = maxConcurrentStreams;
    b.setupTimeout = setupTimeout;
    b.maxInboundKeepAlivesPerSecond = maxInboundKeepAlivesPerSecond;
    b.maxInboundMetadataPushesPerSecond = maxInboundMetadataPushesPerSecond;
    b.maxQueuedBytes = maxQueuedBytes;
    b.errorMessagesFromHandlers = errorMessagesFromHandlers;
    b.drainTimeout = drainTimeout;
    b.maxQueuedCallBytes = maxQueuedCallBytes;
    b.maxUnreadBytes = maxUnreadBytes;
    b.resumption = resumption;
    b.reconnect = reconnect;
    return b;
  }

  /**
   * Session resumption, or null (the default) for none. Client: SETUP asks for it and the client
   * reconnects and resumes when the connection breaks. Server: clients that ask get it.
   */
  public Resumption resumption() {
    return resumption;
  }

  /**
   * Client: reconnecting when the connection is lost, or null (the default) for none. With it, a
   * client's {@code connect} returns one connection that carries on across connections (see {@link
   * Reconnect}). Servers ignore it.
   */
  public Reconnect reconnect() {
    return reconnect;
  }

  /** Client: the metadata MIME type sent in SETUP. Default {@code application/binary}. */
  public String metadataMimeType() {
    return metadataMimeType;
  }

  /** Client: the data MIME type sent in SETUP. Default {@code application/binary}. */
  public String dataMimeType() {
    return dataMimeType;
  }

  /** Client: how often to send KEEPALIVE. Default 20 s. */
  public Duration keepAliveInterval() {
    return keepAliveInterval;
  }

  /** Client: silence from the server tolerated before the connection is closed. Default 90 s. */
  public Duration maxLifetime() {
    return maxLifetime;
  }

  /** Client: whether SETUP asks for leases (L flag). Default false. */
  public boolean lease() {
    return lease;
  }

  /**
   * The hook that grants leases to the peer on lease-enabled connections; a server without one
   * rejects SETUPs that ask for leases with UNSUPPORTED_SETUP. Default none.
   */
  public LeaseIssuer leaseIssuer() {
    return leaseIssuer;
  }

  /**
   * Outbound frames longer than this are fragmented; counts the 3-byte length prefix and header as
   * rsocket-java does. 0 disables fragmentation below {@link #maxFrameLength()}. Default 0.
   */
  public int fragmentSize() {
    return fragmentSize;
  }

  /**
   * Longest inbound frame accepted; a longer one closes the connection with CONNECTION_ERROR.
   * Outbound frames are fragmented to stay within it too. Default 1 MiB (protocol maximum 16 MiB).
   */
  public int maxFrameLength() {
    return maxFrameLength;
  }

  /**
   * Longest message reassembled from fragments, metadata and data together, each fragment also
   * charged 16 bytes of overhead so floods of empty fragments hit the limit. Breaking it closes the
   * connection with CONNECTION_ERROR. Default 16 MiB.
   */
  public int maxReassembledLength() {
    return maxReassembledLength;
  }

  /**
   * Bytes held for all fragmented messages of a connection in progress at once, charged as for
   * {@link #maxReassembledLength()}; breaking it closes the connection with CONNECTION_ERROR.
   * Default 32 MiB.
   */
  public long maxReassemblyBytesPerConnection() {
    return maxReassemblyBytesPerConnection;
  }

  /**
   * Streams the peer may have open at once; beyond it requests get ERROR[REJECTED]. Default 4096.
   */
  public int maxConcurrentStreams() {
    return maxConcurrentStreams;
  }

  /** Server: time from accept to SETUP before the connection is closed. Default 5 s. */
  public Duration setupTimeout() {
    return setupTimeout;
  }

  /** Inbound KEEPALIVE frames allowed per second (burst as large). Default 20. */
  public int maxInboundKeepAlivesPerSecond() {
    return maxInboundKeepAlivesPerSecond;
  }

  /** Inbound METADATA_PUSH frames allowed per second (burst as large). Default 1000. */
  public int maxInboundMetadataPushesPerSecond() {
    return maxInboundMetadataPushesPerSecond;
  }

  /**
   * Outbound bytes queued for a peer beyond which this side stops reading from it until the queue
   * drains: a peer that does not read cannot make this side buffer without bound. Default 4 MiB.
   */
  public long maxQueuedBytes() {
    return maxQueuedBytes;
  }

  /**
   * Whether the message of an exception thrown by a responder, listener or acceptor is sent to the
   * peer in the ERROR frame. Off by default: exception messages may carry internals (paths,
   * queries, user data), so the peer gets a fixed text ("the handler failed") and the exception is
   * logged here. Errors a handler sends on purpose with {@link Stream#error} always carry their
   * message.
   */
  public boolean errorMessagesFromHandlers() {
    return errorMessagesFromHandlers;
  }

  /**
   * How long a graceful close ({@link Connection#close()}, a server's {@code shutdown()}) may take:
   * open streams finishing, the peer closing its side, the last frames reaching the socket. Then it
   * is forced. Closes after an error wait at most 5 s of it for the ERROR frame to go out. Default
   * 30 s.
   */
  public Duration drainTimeout() {
    return drainTimeout;
  }

  /**
   * Payload bytes of calls from other threads waiting for the event loop, per connection (each call
   * also counts 64 bytes of bookkeeping). A call beyond it is refused with {@link
   * java.util.concurrent.RejectedExecutionException}; see {@link Connection#isReadyForCalls()}.
   * Default 4 MiB.
   */
  public long maxQueuedCallBytes() {
    return maxQueuedCallBytes;
  }

  /**
   * Bytes of received messages that may wait, on this connection, for readers that have not taken
   * them yet: what subscribers' prefetch queues and blocking readers' queues hold, on all the
   * connection's streams together, each message counted by its metadata and data (an RPC message by
   * its serialized size, another marshaller's by none) and 64 bytes more. A message that would take
   * them past it is dropped and its stream cancelled, and the stream's reader gets a {@code
   * BacklogExceededException} (RESOURCE_EXHAUSTED in RPC): a blocking reader after what waits, a
   * subscriber at once. A message is always let through when nothing else is counted as waiting.
   * Credit (REQUEST_N) counts messages, not bytes, and a reader asks for its first messages before
   * their size is known: without this limit a peer could park the credit of every stream it opens
   * times the largest message. The stream cancelled is the one whose message does not fit, which
   * may not be the one whose reader is slow. Default 64 MiB; raise it for readers that fall behind
   * on messages of several MiB (a blocking reader's first request asks for 32 of them).
   */
  public long maxUnreadBytes() {
    return maxUnreadBytes;
  }

  /** Builds a {@link ConnectionConfig}; every setter checks its argument. */
  public static final class Builder {
    private String metadataMimeType = "application/binary";
    private String dataMimeType = "application/binary";
    private Duration keepAliveInterval = Duration.ofSeconds(20);
    private Duration maxLifetime = Duration.ofSeconds(90);
    private boolean lease;
    private LeaseIssuer leaseIssuer;
    private int fragmentSize;
    private int maxFrameLength = 1 << 20;
    private int maxReassembledLength = 16 << 20;
    private long maxReassemblyBytesPerConnection = 32L << 20;
    private int maxConcurrentStreams = 4096;
    private Duration setupTimeout = Duration.ofSeconds(5);
    private int maxInboundKeepAlivesPerSecond = 20;
    private int maxInboundMetadataPushesPerSecond = 1000;
    private long maxQueuedBytes = 4L << 20;
    private boolean errorMessagesFromHandlers;
    private Duration drainTimeout = Duration.ofSeconds(30);
    private long maxQueuedCallBytes = 4L << 20;
    private long maxUnreadBytes = 64L << 20;
    private Resumption resumption;
    private Reconnect reconnect;

    private Builder() {}

    /** Turns resumption on with these settings; null turns it off. */
    public Builder resumption(Resumption resumption) {
      this.resumption = resumption;
      return this;
    }

    /** Client: turns reconnecting on with these settings; null turns it off. */
    public Builder reconnect(Reconnect reconnect) {
      this.reconnect = reconnect;
      return this;
    }

    public Builder drainTimeout(Duration drainTimeout) {
      if (drainTimeout.isNegative()) {
        throw new IllegalArgumentException("drain timeout must not be negative");
      }
      this.drainTimeout = drainTimeout;
      return this;
    }

    public Builder maxQueuedCallBytes(long bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("max queued call bytes must be at least 1024");
      }
      this.maxQueuedCallBytes = bytes;
      return this;
    }

    /** See {@link ConnectionConfig#maxUnreadBytes()}; at least 1024. */
    public Builder maxUnreadBytes(long bytes) {
      if (bytes < 1024) {
        throw new IllegalArgumentException("max unread bytes must be at least 1024");
      }
      this.maxUnreadBytes = bytes;
      return this;
    }

    public Builder errorMessagesFromHandlers(boolean send) {
      this.errorMessagesFromHandlers = send;
      return this;
    }

    public Builder mimeTypes(String metadataMimeType, String dataMimeType) {
      this.metadataMimeType = Objects.requireNonNull(metadataMimeType);
      this.dataMimeType = Objects.requireNonNull(dataMimeType);
      return this;
    }

    public Builder keepAlive(Duration interval, Duration maxLifetime) {
      if (interval.toMillis() <= 0 || maxLifetime.toMillis() <= 0) {
        throw new IllegalArgumentException("keepalive interval and max lifetime must be positive");
      }
      if (interval.toMillis() > Integer.MAX_VALUE || maxLifetime.toMillis() > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("keepalive interval and max lifetime must fit 31 bits");
      }
      this.keepAliveInterval = interval;
      this.maxLifetime = maxLifetime;
      return this;
    }

    public Builder lease(boolean lease) {
      this.lease = lease;
      return this;
    }

    public Builder leaseIssuer(LeaseIssuer leaseIssuer) {
      this.leaseIssuer = leaseIssuer;
      return this;
    }

    public Builder fragmentSize(int fragmentSize) {
      if (fragmentSize != 0 && fragmentSize < 64) {
        throw new IllegalArgumentException("fragment size must be 0 (off) or at least 64");
      }
      this.fragmentSize = fragmentSize;
      return this;
    }

    public Builder maxFrameLength(int maxFrameLength) {
      if (maxFrameLength < 64 || maxFrameLength > 0xFF_FFFF) {
        throw new IllegalArgumentException("max frame length must be 64 to 16777215");
      }
      this.maxFrameLength = maxFrameLength;
      return this;
    }

    public Builder maxReassembledLength(int maxReassembledLength) {
      if (maxReassembledLength < 64) {
        throw new IllegalArgumentException("max reassembled length must be at least 64");
      }
      this.maxReassembledLength = maxReassembledLength;
      return this;
    }

    public Builder maxReassemblyBytesPerConnection(long bytes) {
      if (bytes < 64) {
        throw new IllegalArgumentException("max reassembly bytes must be at least 64");
      }
      this.maxReassemblyBytesPerConnection = bytes;
      return this;
    }

    public Builder maxConcurrentStreams(int maxConcurrentStreams) {
      if (maxConcurrentStreams < 1) {
        throw new IllegalArgumentException("max concurrent streams must be positive");
      }
      this.maxConcurrentStreams = maxConcurrentStreams;
      return this;
    }

    public Builder setupTimeout(Duration setupTimeout) {
      if (setupTimeout.toMillis() <= 0) {
        throw new IllegalArgumentException("setup timeout must be positive");
      }
      this.setupTimeout = setupTimeout;
      return this;
    }

    public Builder maxInboundKeepAlivesPerSecond(int rate) {
      if (rate < 1) {
        throw new IllegalArgumentException("rate must be positive");
      }
      this.maxInboundKeepAlivesPerSecond = rate;
      return this;
    }

    public Builder maxInboundMetadataPushesPerSecond(int rate) {
      if (rate < 1) {
        throw new IllegalArgumentException("rate must be positive");
      }
      this.maxInboundMetadataPushesPerSecond = rate;
      return this;
    }

    public Builder maxQueuedBytes(long maxQueuedBytes) {
      if (maxQueuedBytes < 1024) {
        throw new IllegalArgumentException("max queued bytes must be at least 1024");
      }
      this.maxQueuedBytes = maxQueuedBytes;
      return this;
    }

    public ConnectionConfig build() {
      return new ConnectionConfig(this);
    }
  }
}
