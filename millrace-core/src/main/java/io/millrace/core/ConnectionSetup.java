package io.millrace.core;

import io.netty.buffer.ByteBuf;

/**
 * What a client's SETUP frame asked for, as the server's {@link Acceptor} sees it.
 *
 * <p>{@link #metadata()} and {@link #data()} are borrowed: valid only during {@link
 * Acceptor#accept}; keep them with {@code retainedSlice()} or a copy. Metadata is null when the
 * SETUP had none.
 */
public final class ConnectionSetup {
  private final String metadataMimeType;
  private final String dataMimeType;
  private final int keepAliveIntervalMillis;
  private final int maxLifetimeMillis;
  private final boolean lease;
  private final ByteBuf metadata;
  private final ByteBuf data;

  public ConnectionSetup(
      String metadataMimeType,
      String dataMimeType,
      int keepAliveIntervalMillis,
      int maxLifetimeMillis,
      boolean lease,
      ByteBuf metadata,
      ByteBuf data) {
    this.metadataMimeType = metadataMimeType;
    this.dataMimeType = dataMimeType;
    this.keepAliveIntervalMillis = keepAliveIntervalMillis;
    this.maxLifetimeMillis = maxLifetimeMillis;
    this.lease = lease;
    this.metadata = metadata;
    this.data = data;
  }

  public String metadataMimeType() {
    return metadataMimeType;
  }

  public String dataMimeType() {
    return dataMimeType;
  }

  public int keepAliveIntervalMillis() {
    return keepAliveIntervalMillis;
  }

  public int maxLifetimeMillis() {
    return maxLifetimeMillis;
  }

  public boolean leaseEnabled() {
    return lease;
  }

  public ByteBuf metadata() {
    return metadata;
  }

  public ByteBuf data() {
    return data;
  }
}
