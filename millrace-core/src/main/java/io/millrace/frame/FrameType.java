package io.millrace.frame;

/**
 * RSocket 1.0 frame type codes, the top six bits of the 16-bit type-and-flags field.
 *
 * <p>Plain {@code int} constants rather than an enum: the reader switches on them per frame and the
 * engine stores them in primitive fields.
 */
public final class FrameType {
  public static final int RESERVED = 0x00;
  public static final int SETUP = 0x01;
  public static final int LEASE = 0x02;
  public static final int KEEPALIVE = 0x03;
  public static final int REQUEST_RESPONSE = 0x04;
  public static final int REQUEST_FNF = 0x05;
  public static final int REQUEST_STREAM = 0x06;
  public static final int REQUEST_CHANNEL = 0x07;
  public static final int REQUEST_N = 0x08;
  public static final int CANCEL = 0x09;
  public static final int PAYLOAD = 0x0A;
  public static final int ERROR = 0x0B;
  public static final int METADATA_PUSH = 0x0C;
  public static final int RESUME = 0x0D;
  public static final int RESUME_OK = 0x0E;
  public static final int EXT = 0x3F;

  private FrameType() {}

  /** Whether frames of this type may carry metadata after a 24-bit length (M flag). */
  public static boolean hasMetadataLength(int type) {
    return type >= REQUEST_RESPONSE && type <= REQUEST_CHANNEL || type == PAYLOAD || type == EXT;
  }

  /** The spec's name of a type code, for logs and errors. */
  public static String name(int type) {
    switch (type) {
      case RESERVED:
        return "RESERVED";
      case SETUP:
        return "SETUP";
      case LEASE:
        return "LEASE";
      case KEEPALIVE:
        return "KEEPALIVE";
      case REQUEST_RESPONSE:
        return "REQUEST_RESPONSE";
      case REQUEST_FNF:
        return "REQUEST_FNF";
      case REQUEST_STREAM:
        return "REQUEST_STREAM";
      case REQUEST_CHANNEL:
        return "REQUEST_CHANNEL";
      case REQUEST_N:
        return "REQUEST_N";
      case CANCEL:
        return "CANCEL";
      case PAYLOAD:
        return "PAYLOAD";
      case ERROR:
        return "ERROR";
      case METADATA_PUSH:
        return "METADATA_PUSH";
      case RESUME:
        return "RESUME";
      case RESUME_OK:
        return "RESUME_OK";
      case EXT:
        return "EXT";
      default:
        return "UNKNOWN(0x" + Integer.toHexString(type) + ")";
    }
  }
}
