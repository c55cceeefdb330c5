package io.millrace.bench;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
    return jars.stream().anyMatch(j -> artifact.equals(ClassPaths.artifact(j)));
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
  void artifactNames_leaveVersionAndClassifierOut() {
    assertThat(
            ClassPaths.artifact(
                "lib/netty-tcnative-boringssl-static-2.0.84.Final-linux-x86_64.jar"))
        .isEqualTo("netty-tcnative-boringssl-static");
    assertThat(
            ClassPaths.artifact("listenablefuture-9999.0-empty-to-avoid-conflict-with-guava.jar"))
        .isEqualTo("listenablefuture");
    assertThat(ClassPaths.artifact("/x/millrace-core-0.1.0-SNAPSHOT.jar"))
        .isEqualTo("millrace-core");
    assertThat(ClassPaths.artifact("millrace-bench.jar")).isNull();
  }

  @Test
  void harnessJar_manifestEntriesResolveAgainstItsDirectory(@TempDir Path dir) throws Exception {
    Manifest manifest = new Manifest();
    manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
    manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, "lib/a-1.0.jar lib/b%20c-2.0.jar");
    Path jar = dir.resolve("millrace-bench.jar");
    new JarOutputStream(Files.newOutputStream(jar), manifest).close(); // a manifest only
    assertThat(ClassPaths.manifestClassPath(jar))
        .containsExactly(dir.resolve("lib/a-1.0.jar"), dir.resolve("lib/b c-2.0.jar"));
    assertThat(ClassPaths.classesJar(jar)).isEqualTo(dir.resolve("millrace-bench-classes.jar"));
  }

  @Test
  void aProcessCommand_picksTheMatrixsOrTheScenariosSystems_orTheWholeClassPath() {
    assertThat(ClassPaths.artifacts(List.of("serve", "--system", "millrace-rxjava", "--port", "1")))
        .contains("rxjava")
        .doesNotContain("millrace-example-chat");
    assertThat(ClassPaths.artifacts(List.of("scenario-serve", "--system", "rest")))
        .contains("millrace-example-chat", "protobuf-java-util", "gson")
        .doesNotContain("grpc-core");
    assertThat(ClassPaths.artifacts(List.of("small-heap-drive", "--system", "grpc-java")))
        .contains("grpc-netty", "millrace-example-chat");
    assertThat(ClassPaths.artifacts(List.of("idle-serve", "--system", "rsocket-java")))
        .as("the idle-connection pass's processes, as the matrix's")
        .contains("rsocket-core")
        .doesNotContain("grpc-core");
    assertThat(ClassPaths.artifacts(List.of("idle-drive", "--system", "grpc-java")))
        .contains("grpc-netty")
        .doesNotContain("rsocket-core");
    assertThat(ClassPaths.artifacts(List.of("resume-serve"))).as("no system named").isNull();
    assertThat(ClassPaths.forProcess(List.of("resume-serve")))
        .isEqualTo(System.getProperty("java.class.path"));
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
