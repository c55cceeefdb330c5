package io.millrace.core.internal;

import io.millrace.core.CloseReason;
import io.millrace.core.Resumption;
import io.millrace.frame.ErrorCode;
import io.millrace.frame.ResumeFrame;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A server's resumable sessions by token: where a RESUME finds its session, whichever event loop
 * the new connection landed on. Any thread.
 *
 * <p>Tokens: a SETUP's token is taken only if no live session has it and no ended session had it
 * recently (the last {@link #REMEMBERED_TOKENS} ended tokens are remembered), so a token is never
 * accepted twice for SETUP while it could still confuse a RESUME. Tokens are the client's choice;
 * Millrace clients draw 16 bytes from {@link java.security.SecureRandom}.
 *
 * <p>Memory: every session's replay store counts against one {@link ResumeBudget}. When it is used
 * up, attached sessions hold their senders back, and the session that has waited longest for its
 * client is expired to make room (its streams fail; a RESUME for it gets REJECTED_RESUME).
 */
public final class ResumeSessions {
  private static final System.Logger LOG = System.getLogger(ResumeSessions.class.getName());

  /** Ended tokens remembered so that a SETUP cannot take one again. */
  static final int REMEMBERED_TOKENS = 16_384;

  private final Resumption settings;
  private final ResumeBudget budget;
  private final ConcurrentHashMap<ByteBuffer, ResumableSession> live = new ConcurrentHashMap<>();
  private final ConcurrentHashMap<ResumableSession, Boolean> detached = new ConcurrentHashMap<>();

  private final Map<ByteBuffer, Boolean> ended =
      new LinkedHashMap<>() {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ByteBuffer, Boolean> eldest) {
          return size() > REMEMBERED_TOKENS;
        }
      };

  public ResumeSessions(Resumption settings, long maxBytes) {
    this.settings = settings;
    this.budget = new ResumeBudget(maxBytes);
  }

  Resumption settings() {
    return settings;
  }

  ResumeBudget budget() {
    return budget;
  }

  /** Sessions that can be resumed right now (attached or waiting for their client). */
  public int size() {
    return live.size();
  }

  /** Bytes held by every session's replay store. */
  public long heldBytes() {
    return budget.held();
  }

  boolean register(byte[] token, ResumableSession session) {
    ByteBuffer key = ByteBuffer.wrap(token.clone());
    synchronized (ended) { // one lock with remove(): a token cannot end between check and insert
      return !ended.containsKey(key) && live.putIfAbsent(key, session) == null;
    }
  }

  void remove(byte[] token, ResumableSession session) {
    ByteBuffer key = ByteBuffer.wrap(token);
    detached.remove(session);
    synchronized (ended) {
      live.remove(key, session);
      ended.put(key, Boolean.TRUE);
    }
  }

  /**
   * {@code session} waits for its client. It is expired for room only when a session that is
   * attached needs it (see {@link #overBudget}), not merely because the budget is used up.
   */
  void detached(ResumableSession session) {
    detached.put(session, Boolean.TRUE);
  }

  void attached(ResumableSession session) {
    detached.remove(session);
  }

  /**
   * The budget is used up: the session detached longest ends, on its own loop (called again while
   * the budget stays used up, so one session at a time goes until there is room).
   */
  void overBudget() {
    ResumableSession oldest =
        detached.keySet().stream()
            .min(Comparator.comparingLong(ResumableSession::detachedAtNanos))
            .orElse(null);
    if (oldest != null && detached.remove(oldest) != null) {
      LOG.log(Level.WARNING, "resume memory used up: expiring the session detached longest");
      oldest
          .executor()
          .execute(
              () ->
                  oldest.expire(
                      "the server's resume memory ("
                          + budget.max()
                          + " bytes) is used up; the session detached longest was ended"));
    }
  }

  /**
   * A new connection's first frame is RESUME: hand its transport to the session the token names, or
   * answer REJECTED_RESUME. Called on the new connection's loop by its (not resumable) session.
   */
  void resumeRequested(ResumableSession arrival, Transport transport, ByteBuf frame) {
    ConnectionEngine newcomer = arrival.engine();
    if (!ResumeFrame.isWellFormed(frame)) {
      newcomer.terminate(
          CloseReason.Kind.ERROR_SENT, ErrorCode.CONNECTION_ERROR, "malformed RESUME", true);
      return;
    }
    ByteBuffer key = ByteBuffer.wrap(ByteBufUtil.getBytes(ResumeFrame.token(frame)));
    long lastReceivedServerPosition = ResumeFrame.lastReceivedServerPosition(frame);
    long firstAvailableClientPosition = ResumeFrame.firstAvailableClientPosition(frame);
    ResumableSession session = live.get(key);
    if (session == null) {
      newcomer.terminate(
          CloseReason.Kind.ERROR_SENT,
          ErrorCode.REJECTED_RESUME,
          "no session to resume: unknown or expired token",
          true);
      return;
    }
    arrival.handOver();
    transport.setReading(false);
    transport.moveTo(
        session.executor(),
        () ->
            session.resumeOn(transport, lastReceivedServerPosition, firstAvailableClientPosition));
  }
}
