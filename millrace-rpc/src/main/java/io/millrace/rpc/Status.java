package io.millrace.rpc;

import com.google.protobuf.ByteString;
import io.millrace.streams.BacklogExceededException;
import java.util.Objects;

/**
 * The outcome of a call: one of gRPC's seventeen codes, an optional message for people and optional
 * details for programs (by convention a serialized {@code google.rpc.Status}), so that statuses map
 * one to one across the gRPC bridge. Immutable; {@link #cause()} is kept on this side only and
 * never sent.
 */
public final class Status {
  /** gRPC's status codes, with their numbers on the wire. */
  public enum Code {
    OK(0),
    CANCELLED(1),
    UNKNOWN(2),
    INVALID_ARGUMENT(3),
    DEADLINE_EXCEEDED(4),
    NOT_FOUND(5),
    ALREADY_EXISTS(6),
    PERMISSION_DENIED(7),
    RESOURCE_EXHAUSTED(8),
    FAILED_PRECONDITION(9),
    ABORTED(10),
    OUT_OF_RANGE(11),
    UNIMPLEMENTED(12),
    INTERNAL(13),
    UNAVAILABLE(14),
    DATA_LOSS(15),
    UNAUTHENTICATED(16);

    private static final Code[] BY_VALUE = values();

    private final int value;

    Code(int value) {
      this.value = value;
    }

    /** The number on the wire. */
    public int value() {
      return value;
    }

    /** The code with this number; a number no code has is UNKNOWN, as gRPC reads it. */
    public static Code of(int value) {
      return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : UNKNOWN;
    }

    /** A status with this code and no message. */
    public Status toStatus() {
      return Status.of(this);
    }
  }

  private static final Status[] PLAIN = new Status[Code.BY_VALUE.length];

  static {
    for (Code c : Code.BY_VALUE) {
      PLAIN[c.value] = new Status(c, null, ByteString.EMPTY, null);
    }
  }

  public static final Status OK = of(Code.OK);
  public static final Status CANCELLED = of(Code.CANCELLED);
  public static final Status UNKNOWN = of(Code.UNKNOWN);
  public static final Status DEADLINE_EXCEEDED = of(Code.DEADLINE_EXCEEDED);
  public static final Status UNIMPLEMENTED = of(Code.UNIMPLEMENTED);
  public static final Status INTERNAL = of(Code.INTERNAL);
  public static final Status UNAVAILABLE = of(Code.UNAVAILABLE);
  public static final Status RESOURCE_EXHAUSTED = of(Code.RESOURCE_EXHAUSTED);

  private final Code code;
  private final String message;
  private final ByteString details;
  private final Throwable cause;

  private Status(Code code, String message, ByteString details, Throwable cause) {
    this.code = code;
    this.message = message;
    this.details = details;
    this.cause = cause;
  }

  /** The status with {@code code}, no message and no details. */
  public static Status of(Code code) {
    return PLAIN[code.value];
  }

  /**
   * The status a failure stands for: a {@link StatusException}'s own, RESOURCE_EXHAUSTED for a
   * stream of requests cancelled for its backlog ({@link BacklogExceededException}, whose message
   * is Millrace's own), otherwise UNKNOWN with the throwable as its cause (its message is not sent:
   * it may carry internals).
   */
  public static Status fromThrowable(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof StatusException e) {
        return e.status();
      }
      if (c instanceof BacklogExceededException) {
        return RESOURCE_EXHAUSTED.withMessage(c.getMessage()).withCause(t);
      }
    }
    return UNKNOWN.withCause(t);
  }

  public Code code() {
    return code;
  }

  /** The message for people, or null. */
  public String message() {
    return message;
  }

  /** Details for programs (empty when none). */
  public ByteString details() {
    return details;
  }

  /** What caused it on this side, or null; never sent. */
  public Throwable cause() {
    return cause;
  }

  public boolean isOk() {
    return code == Code.OK;
  }

  public Status withMessage(String message) {
    return Objects.equals(message, this.message) ? this : new Status(code, message, details, cause);
  }

  public Status withDetails(ByteString details) {
    Objects.requireNonNull(details, "details");
    return details.equals(this.details) ? this : new Status(code, message, details, cause);
  }

  public Status withCause(Throwable cause) {
    return cause == this.cause ? this : new Status(code, message, details, cause);
  }

  /** This status as an exception to throw or to fail a call with. */
  public StatusException asException() {
    return new StatusException(this, null);
  }

  /** This status as an exception that also carries {@code trailers} to the caller. */
  public StatusException asException(Headers trailers) {
    return new StatusException(this, trailers);
  }

  /** Same code, message and details (the cause is local and does not count). */
  @Override
  public boolean equals(Object o) {
    return o instanceof Status s
        && s.code == code
        && Objects.equals(s.message, message)
        && s.details.equals(details);
  }

  @Override
  public int hashCode() {
    return Objects.hash(code, message, details);
  }

  /** {@code CODE} or {@code CODE: message}, as an error message on the wire reads. */
  @Override
  public String toString() {
    return message == null ? code.name() : code.name() + ": " + message;
  }
}
