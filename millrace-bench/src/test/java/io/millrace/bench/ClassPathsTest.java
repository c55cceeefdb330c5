package io.millrace.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A measured process's class path holds its own system's jars and not the peers' (this test's own
 * class path, Maven's, stands in for the harness jar's). The smoke tests start processes on them.
 */
class ClassPathsTest {

  private static List<String> jarNames(String classPath) {
    return List.of(classPath.split(File.pathSeparator)).stream()
        .filter(e -> e.endsWith(".jar"))
        .map(e -> new File(e).getName())
        .toList();
  }

  private static boolean has(List<String> jars, String artifact) {
    return jars.stream().anyMatch(j -> j.startsWith(artifact + "-") && j.matches(".*-[0-9].*"));
  }

  @Test
  void coreMillrace_getsNettyButNoPeerOrFlavour() {
    List<String> jars = jarNames(ClassPaths.forSystem("millrace"));
    assertThat(has(jars, "netty-transport-native-epoll")).isTrue();
    assertThat(has(jars, "picocli")).isTrue();
    for (String absent :
        List.of("grpc-core", "guava", "rsocket-core", "reactor-core", "rxjava", "blockhound")) {
      assertThat(has(jars, absent)).as(absent).isFalse();
    }
  }

  @Test
  void eachSystem_getsItsOwnLibrary() {
    assertThat(has(jarNames(ClassPaths.forSystem("millrace-rpc-rxjava")), "rxjava")).isTrue();
    assertThat(has(jarNames(ClassPaths.forSystem("millrace-rpc-rxjava")), "protobuf-java"))
        .isTrue();
    assertThat(has(jarNames(ClassPaths.forSystem("millrace-rpc-rxjava")), "reactor-core"))
        .isFalse();
    assertThat(has(jarNames(ClassPaths.forSystem("millrace-mutiny")), "mutiny")).isTrue();
    assertThat(has(jarNames(ClassPaths.forSystem("grpc-java")), "grpc-netty")).isTrue();
    assertThat(has(jarNames(ClassPaths.forSystem("grpc-java")), "rsocket-core")).isFalse();
    assertThat(has(jarNames(ClassPaths.forSystem("rsocket-java")), "reactor-netty-core")).isTrue();
    assertThat(has(jarNames(ClassPaths.forSystem("rsocket-java")), "grpc-core")).isFalse();
  }

  @Test
  void everyKnownSystem_hasAClassPath_anUnknownOneFails() {
    for (String system : Systems.NAMES) {
      assertThat(ClassPaths.artifacts(system)).as(system).contains("millrace-core", "picocli");
    }
    assertThatThrownBy(() -> ClassPaths.artifacts("no-such-system"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
