package io.millrace.frame;

/**
 * A frame that violates the RSocket 1.0 format: too short, a length that overruns the frame, a
 * stream id not allowed for its type, an unknown type without the ignore flag. The connection
 * answers with ERROR[CONNECTION_ERROR] (or INVALID_SETUP for a bad SETUP) and closes.
 */
public final class FrameFormatException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public FrameFormatException(String message) {
    super(message, null, false, false);
  }
}
