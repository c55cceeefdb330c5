package io.millrace.transport.netty;

import io.millrace.core.internal.ConnectionEngine;
import io.netty.util.AttributeKey;

final class Attributes {
  static final AttributeKey<ConnectionEngine> ENGINE =
      AttributeKey.valueOf(Attributes.class, "millrace.engine");

  private Attributes() {}
}
