package io.millrace.rpc;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class MethodIdsTest {
  @Test
  void isFnv1a64_onTheUtf8Name() {
    // The published FNV-1a 64-bit test vectors.
    assertThat(MethodIds.of("")).isEqualTo(0xcbf29ce484222325L);
    assertThat(MethodIds.of("a")).isEqualTo(0xaf63dc4c8601ec8cL);
    assertThat(MethodIds.of("foobar")).isEqualTo(0x85944171f73967e8L);
  }

  @Test
  void theEchoServicesMethods_haveDistinctIds() {
    assertThat(
            java.util.stream.Stream.of("Echo", "Count", "Collect", "Chat")
                .map(m -> MethodIds.of("millrace.echo.v1.EchoService/" + m))
                .distinct()
                .count())
        .isEqualTo(4);
  }
}
