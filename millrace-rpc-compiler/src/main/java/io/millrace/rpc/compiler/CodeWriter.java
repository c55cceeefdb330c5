package io.millrace.rpc.compiler;

/** Java source with indentation: {@code line} writes one line at the current depth. */
final class CodeWriter {
  private final StringBuilder out = new StringBuilder();
  private int depth;

  CodeWriter line(String text) {
    if (!text.isEmpty()) {
      out.append("  ".repeat(depth));
    }
    out.append(text).append('\n');
    return this;
  }

  CodeWriter blank() {
    out.append('\n');
    return this;
  }

  /** Writes {@code text} and goes one level deeper (text usually ends with "{"). */
  CodeWriter open(String text) {
    line(text);
    depth++;
    return this;
  }

  /** Goes one level up and writes {@code text} (usually "}"). */
  CodeWriter close(String text) {
    depth--;
    return line(text);
  }

  /** Moves the depth by {@code levels} without writing. */
  CodeWriter depth(int levels) {
    depth += levels;
    return this;
  }

  @Override
  public String toString() {
    return out.toString();
  }
}
