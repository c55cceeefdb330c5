package io.millrace.core;

import io.millrace.frame.ErrorCode;

/** Rejects a SETUP with one of the setup error codes; the message travels in the ERROR frame. */
public final class SetupException extends RuntimeException {
  private static final long serialVersionUID = 1L;
  private final int errorCode;

  public SetupException(int errorCode, String message) {
    super(message);
    if (errorCode < ErrorCode.INVALID_SETUP || errorCode > ErrorCode.REJECTED_RESUME) {
      throw new IllegalArgumentException("not a setup error code: " + ErrorCode.name(errorCode));
    }
    this.errorCode = errorCode;
  }

  public static SetupException rejected(String message) {
    return new SetupException(ErrorCode.REJECTED_SETUP, message);
  }

  public int errorCode() {
    return errorCode;
  }
}
