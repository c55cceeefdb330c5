package io.millrace.rpc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Request headers, response headers or trailers: an ordered list of (key, value) pairs in which a
 * key may repeat, with gRPC's rules so that they cross the gRPC bridge unchanged. Keys are lower
 * case ASCII letters, digits and {@code - _ .}; a key ending in {@code -bin} holds bytes, any other
 * holds text of printable ASCII. Keys starting with {@code grpc-} are reserved for the protocol.
 *
 * <p>Not thread-safe: one thread builds headers, then hands them over. {@link #EMPTY} is read-only.
 */
public final class Headers {
  /**
   * What each entry counts towards the size limit beyond its key and value, as HTTP/2 counts a
   * header list (RFC 9113, 6.5.2): many tiny entries cost memory too.
   */
  public static final int ENTRY_OVERHEAD = 32;

  /** No headers; read-only. */
  public static final Headers EMPTY = new Headers(true);

  private static final String BINARY_SUFFIX = "-bin";
  private static final String[] NO_KEYS = {};
  private static final byte[][] NO_VALUES = {};

  private final boolean readOnly;
  private String[] keys = NO_KEYS;
  private byte[][] values = NO_VALUES;
  private int size;
  private int bytes;

  public Headers() {
    this(false);
  }

  private Headers(boolean readOnly) {
    this.readOnly = readOnly;
  }

  /** Adds a text header; the key must not end in {@code -bin}. */
  public Headers put(String key, String value) {
    checkKey(key);
    if (isBinary(key)) {
      throw new IllegalArgumentException("key " + key + " ends in -bin: use putBinary");
    }
    return add(key, checkText(key, value));
  }

  /** Adds a binary header (the array is kept, not copied); the key must end in {@code -bin}. */
  public Headers putBinary(String key, byte[] value) {
    checkKey(key);
    if (!isBinary(key)) {
      throw new IllegalArgumentException("binary key " + key + " must end in -bin");
    }
    if (value == null) {
      throw new NullPointerException("value");
    }
    return add(key, value);
  }

  /** The last text value of {@code key}, or null. */
  public String get(String key) {
    byte[] v = last(key);
    return v == null || isBinary(key) ? null : new String(v, StandardCharsets.US_ASCII);
  }

  /** The last binary value of {@code key}, or null. */
  public byte[] getBinary(String key) {
    return isBinary(key) ? last(key) : null;
  }

  /** Every text value of {@code key}, in the order added. */
  public List<String> getAll(String key) {
    List<String> all = new ArrayList<>(2);
    if (!isBinary(key)) {
      for (int i = 0; i < size; i++) {
        if (keys[i].equals(key)) {
          all.add(new String(values[i], StandardCharsets.US_ASCII));
        }
      }
    }
    return all;
  }

  /** The distinct keys, in the order first added. */
  public Set<String> keys() {
    Set<String> set = new LinkedHashSet<>();
    for (int i = 0; i < size; i++) {
      set.add(keys[i]);
    }
    return set;
  }

  public boolean containsKey(String key) {
    return last(key) != null;
  }

  /** Removes every value of {@code key}; returns whether there was one. */
  public boolean remove(String key) {
    checkWritable();
    int kept = 0;
    for (int i = 0; i < size; i++) {
      if (keys[i].equals(key)) {
        bytes -= entryBytes(keys[i], values[i]);
      } else {
        keys[kept] = keys[i];
        values[kept] = values[i];
        kept++;
      }
    }
    boolean removed = kept != size;
    Arrays.fill(keys, kept, size, null);
    Arrays.fill(values, kept, size, null);
    size = kept;
    return removed;
  }

  /** Adds every entry of {@code other}, after this one's. */
  public Headers putAll(Headers other) {
    for (int i = 0; i < other.size; i++) {
      add(other.keys[i], other.values[i]);
    }
    return this;
  }

  /** Number of entries (a repeated key counts each time). */
  public int size() {
    return size;
  }

  public boolean isEmpty() {
    return size == 0;
  }

  /** Bytes of keys and values plus {@link #ENTRY_OVERHEAD} per entry: what the limit measures. */
  public int byteSize() {
    return bytes;
  }

  /** The key of entry {@code i} (0 to size-1), for codecs. */
  public String keyAt(int i) {
    checkIndex(i);
    return keys[i];
  }

  /** The raw value of entry {@code i} (ASCII bytes for text), for codecs; do not modify. */
  public byte[] valueAt(int i) {
    checkIndex(i);
    return values[i];
  }

  /** Whether {@code key} names a binary header. */
  public static boolean isBinary(String key) {
    return key.endsWith(BINARY_SUFFIX);
  }

  /**
   * Adds an entry read off the wire: the key is checked as for {@link #put}, but reserved keys are
   * allowed (the bridge carries them), and a text value is checked as text.
   */
  Headers addReceived(String key, byte[] value) {
    checkKeyChars(key);
    if (!isBinary(key)) {
      for (byte b : value) {
        if (b < 0x20 || b > 0x7E) {
          throw new IllegalArgumentException(
              "header " + key + " has a byte outside printable ASCII");
        }
      }
    }
    return add(key, value);
  }

  private Headers add(String key, byte[] value) {
    checkWritable();
    if (size == keys.length) {
      int n = Math.max(4, size * 2);
      keys = Arrays.copyOf(keys, n);
      values = Arrays.copyOf(values, n);
    }
    keys[size] = key;
    values[size] = value;
    size++;
    bytes += entryBytes(key, value);
    return this;
  }

  private byte[] last(String key) {
    for (int i = size - 1; i >= 0; i--) {
      if (keys[i].equals(key)) {
        return values[i];
      }
    }
    return null;
  }

  private static int entryBytes(String key, byte[] value) {
    return key.length() + value.length + ENTRY_OVERHEAD;
  }

  private void checkWritable() {
    if (readOnly) {
      throw new UnsupportedOperationException("Headers.EMPTY is read-only: make new Headers()");
    }
  }

  private void checkIndex(int i) {
    if (i < 0 || i >= size) {
      throw new IndexOutOfBoundsException(i);
    }
  }

  private static void checkKey(String key) {
    checkKeyChars(key);
    if (key.startsWith("grpc-")) {
      throw new IllegalArgumentException("keys starting with grpc- are reserved: " + key);
    }
  }

  /**
   * {@code s} as it goes into an error message: a name or key from the peer is echoed in the status
   * it gets back, so at most its first 128 characters (it may be megabytes long).
   */
  static String shortened(String s) {
    return s.length() <= 128 ? s : s.substring(0, 128) + "... (" + s.length() + " characters)";
  }

  private static void checkKeyChars(String key) {
    if (key == null) {
      throw new NullPointerException("key");
    }
    if (key.isEmpty() || key.length() > 255) {
      throw new IllegalArgumentException(
          "a header key has 1 to 255 characters: '" + shortened(key) + "'");
    }
    for (int i = 0; i < key.length(); i++) {
      char c = key.charAt(i);
      boolean ok =
          (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
      if (!ok) {
        throw new IllegalArgumentException(
            "header key "
                + shortened(key)
                + ": only lower case letters, digits and - _ . are allowed");
      }
    }
  }

  private static byte[] checkText(String key, String value) {
    if (value == null) {
      throw new NullPointerException("value");
    }
    byte[] ascii = new byte[value.length()];
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c < 0x20 || c > 0x7E) {
        throw new IllegalArgumentException(
            "header " + key + ": text values are printable ASCII (use a -bin key for bytes)");
      }
      ascii[i] = (byte) c;
    }
    return ascii;
  }

  @Override
  public String toString() {
    StringBuilder sb = new StringBuilder("Headers{");
    for (int i = 0; i < size; i++) {
      if (i > 0) {
        sb.append(", ");
      }
      sb.append(keys[i]).append('=');
      if (isBinary(keys[i])) {
        sb.append(values[i].length).append(" bytes");
      } else {
        sb.append(new String(values[i], StandardCharsets.US_ASCII));
      }
    }
    return sb.append('}').toString();
  }
}
