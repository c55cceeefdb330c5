package io.millrace.frame;

/**
 * RSocket 1.0 error codes carried by ERROR frames.
 *
 * <p>The first four are connection-level setup errors (stream 0, then close); {@link
 * #CONNECTION_ERROR} closes at once and {@link #CONNECTION_CLOSE} asks the peer to drain. The
 * stream-level codes end one stream. Codes from {@link #MIN_USER_ALLOWED} to {@link
 * #MAX_USER_ALLOWED} belong to applications.
 */
public final class ErrorCode {
  public static final int RESERVED = 0x00000000;
  public static final int INVALID_SETUP = 0x00000001;
  public static final int UNSUPPORTED_SETUP = 0x00000002;
  public static final int REJECTED_SETUP = 0x00000003;
  public static final int REJECTED_RESUME = 0x00000004;
  public static final int CONNECTION_ERROR = 0x00000101;
  public static final int CONNECTION_CLOSE = 0x00000102;
  public static final int APPLICATION_ERROR = 0x00000201;
  public static final int REJECTED = 0x00000202;
  public static final int CANCELED = 0x00000203;
  public static final int INVALID = 0x00000204;
  public static final int MIN_USER_ALLOWED = 0x00000301;
  public static final int MAX_USER_ALLOWED = 0xFFFFFFFE;
  public static final int RESERVED_EXTENSION = 0xFFFFFFFF;

  private ErrorCode() {}

  /** Whether the code may only appear on stream 0. */
  public static boolean isConnectionLevel(int code) {
    return code >= INVALID_SETUP && code <= REJECTED_RESUME
        || code == CONNECTION_ERROR
        || code == CONNECTION_CLOSE;
  }

  /** Whether an ERROR frame on a stream may carry the code (the spec's stream-level codes). */
  public static boolean isStreamLevel(int code) {
    return code == APPLICATION_ERROR
        || code == REJECTED
        || code == CANCELED
        || code == INVALID
        || Integer.compareUnsigned(code, MIN_USER_ALLOWED) >= 0
            && Integer.compareUnsigned(code, MAX_USER_ALLOWED) <= 0;
  }

  /** The spec's name of a code, or its hex form for application codes. */
  public static String name(int code) {
    switch (code) {
      case INVALID_SETUP:
        return "INVALID_SETUP";
      case UNSUPPORTED_SETUP:
        return "UNSUPPORTED_SETUP";
      case REJECTED_SETUP:
        return "REJECTED_SETUP";
      case REJECTED_RESUME:
        return "REJECTED_RESUME";
      case CONNECTION_ERROR:
        return "CONNECTION_ERROR";
      case CONNECTION_CLOSE:
        return "CONNECTION_CLOSE";
      case APPLICATION_ERROR:
        return "APPLICATION_ERROR";
      case REJECTED:
        return "REJECTED";
      case CANCELED:
        return "CANCELED";
      case INVALID:
        return "INVALID";
      default:
        return "0x" + Integer.toHexString(code);
    }
  }
}
