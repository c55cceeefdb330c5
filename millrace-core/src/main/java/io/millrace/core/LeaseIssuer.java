package io.millrace.core;

import java.util.concurrent.TimeUnit;

/**
 * The responder-side hook that decides what leases to grant on a connection set up with leases.
 * Called once, on the event loop, when such a connection is established; it grants with {@link
 * Connection#sendLease} now and may schedule further grants on {@link Connection#executor()}.
 *
 * <p>Until a lease arrives the peer may not start requests; a request beyond the lease is answered
 * with ERROR[REJECTED].
 */
@FunctionalInterface
public interface LeaseIssuer {

  void onConnected(Connection connection);

  /**
   * Grants {@code requests} requests for every window of {@code ttlMillis}, renewing at each
   * window's end for as long as the connection is open: a simple rate limit.
   */
  static LeaseIssuer fixed(int ttlMillis, int requests) {
    if (ttlMillis <= 0 || requests < 0) {
      throw new IllegalArgumentException("ttl must be positive and requests not negative");
    }
    return connection -> {
      connection.sendLease(ttlMillis, requests, null);
      var renewal =
          connection
              .executor()
              .scheduleAtFixedRate(
                  () -> {
                    if (connection.isOpen()) {
                      connection.sendLease(ttlMillis, requests, null);
                    }
                  },
                  ttlMillis,
                  ttlMillis,
                  TimeUnit.MILLISECONDS);
      connection.onClose().whenComplete((reason, failure) -> renewal.cancel(false));
    };
  }
}
