package io.millrace.rpc;

import java.nio.charset.StandardCharsets;

/**
 * A method's 64-bit id: FNV-1a over the UTF-8 bytes of its full name ({@code
 * package.Service/Method}, as gRPC writes it). Generated code computes it once per method; the
 * server keeps a map from id to method, and refuses two registered names with one id.
 */
public final class MethodIds {
  private static final long OFFSET_BASIS = 0xcbf29ce484222325L;
  private static final long PRIME = 0x100000001b3L;

  private MethodIds() {}

  /** The id of {@code fullName}. */
  public static long of(String fullName) {
    long h = OFFSET_BASIS;
    for (byte b : fullName.getBytes(StandardCharsets.UTF_8)) {
      h ^= b & 0xFF;
      h *= PRIME;
    }
    return h;
  }
}
