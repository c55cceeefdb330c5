package io.millrace.bench;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The class path of a measured process: the harness's own classes and the jars the measured system
 * needs, not every peer's.
 *
 * <p>The harness jar lists every jar of every system (94 of them). The JDK keeps each opened jar's
 * central directory on the heap, and a process opens them all at its first service lookup, so a
 * process on the whole class path carried 2.4 MB of directories whatever it measured (a heap dump,
 * 2026-12-01). In a 20 MB heap those megabytes put the live set close to the point where G1 starts
 * concurrent marking, and the small-heap pass measured the harness's class path more than the
 * system (docs/benchmarks.md, fortieth session). A service built on one system carries its own jars
 * only, and so does its process here.
 *
 * <p>The sets follow each module's runtime dependencies ({@code mvn dependency:list}). A jar left
 * out that a system needs fails its run with a {@code NoClassDefFoundError} in the process log; the
 * harness's smoke tests run every system.
 */
final class ClassPaths {
  /** The jar of the harness's classes without the harness jar's class path, built beside it. */
  static final String CLASSES_SUFFIX = "-classes.jar";

  private static final List<String> HARNESS = List.of("picocli", "HdrHistogram");

  /** millrace-core over Netty's transports, TLS and WebSocket included: every Millrace system. */
  private static final List<String> TRANSPORT =
      List.of(
          "millrace-core",
          "millrace-transport-netty",
          "netty-common",
          "netty-buffer",
          "netty-transport",
          "netty-resolver",
          "netty-codec",
          "netty-codec-base",
          "netty-codec-compression",
          "netty-codec-protobuf",
          "netty-codec-marshalling",
          "netty-codec-http",
          "netty-handler",
          "netty-transport-native-unix-common",
          "netty-transport-classes-epoll",
          "netty-transport-native-epoll",
          "netty-transport-classes-io_uring",
          "netty-transport-native-io_uring",
          "netty-tcnative-classes",
          "netty-tcnative-boringssl-static");

  private static final List<String> STREAMS = List.of("millrace-streams", "reactive-streams");
  private static final List<String> REACTOR =
      List.of("millrace-reactor", "reactor-core", "jspecify");
  private static final List<String> RXJAVA = List.of("millrace-rxjava", "rxjava");
  private static final List<String> MUTINY =
      List.of(
          "millrace-mutiny",
          "mutiny",
          "mutiny-zero-flow-adapters",
          "smallrye-common-annotation",
          "jctools-core",
          "jspecify");
  private static final List<String> OBSERVER = List.of("millrace-observer");
  private static final List<String> FUTURES = List.of("millrace-futures");
  private static final List<String> RPC = List.of("millrace-rpc", "protobuf-java");

  /** grpc-java with Netty and protobuf, and Millrace's gRPC bridge (millrace-grpc's runtime). */
  private static final List<String> GRPC =
      List.of(
          "millrace-grpc",
          "grpc-api",
          "grpc-context",
          "grpc-core",
          "grpc-netty",
          "grpc-protobuf",
          "grpc-protobuf-lite",
          "grpc-services",
          "grpc-stub",
          "grpc-util",
          "netty-codec-http2",
          "netty-handler-proxy",
          "netty-codec-socks",
          "guava",
          "failureaccess",
          "listenablefuture",
          "j2objc-annotations",
          "jsr305",
          "error_prone_annotations",
          "animal-sniffer-annotations",
          "annotations",
          "gson",
          "perfmark-api",
          "proto-google-common-protos",
          "protobuf-java-util");

  /** rsocket-java 1.1 over reactor-netty. */
  private static final List<String> RSOCKET =
      List.of(
          "rsocket-core",
          "rsocket-transport-netty",
          "slf4j-api",
          "reactor-core",
          "reactive-streams",
          "jspecify",
          "reactor-netty-core",
          "reactor-netty-http",
          "netty-codec-http2",
          "netty-handler-proxy",
          "netty-codec-socks",
          "netty-resolver-dns",
          "netty-codec-dns",
          "netty-resolver-dns-classes-macos",
          "netty-resolver-dns-native-macos",
          "netty-codec-http3",
          "netty-codec-classes-quic",
          "netty-codec-native-quic");

  /** A jar's artifact: its file name up to the version ({@code netty-common-4.2.18.Final.jar}). */
  private static final Pattern ARTIFACT = Pattern.compile("^(.+?)-[0-9][^/]*\\.jar$");

  private ClassPaths() {}

  /** The artifacts a process measuring {@code system} needs beside the harness's classes. */
  static Set<String> artifacts(String system) {
    Set<String> out = new LinkedHashSet<>(HARNESS);
    out.addAll(TRANSPORT);
    switch (system) {
      case "millrace", "millrace-resume" -> {}
      case "millrace-reactor" -> add(out, STREAMS, REACTOR);
      case "millrace-rxjava" -> add(out, STREAMS, RXJAVA);
      case "millrace-mutiny" -> add(out, STREAMS, MUTINY);
      case "millrace-observer" -> add(out, STREAMS, OBSERVER);
      case "millrace-futures" -> add(out, STREAMS, FUTURES);
      case "millrace-rpc" -> add(out, STREAMS, OBSERVER, RPC, REACTOR);
      case "millrace-rpc-rxjava" -> add(out, STREAMS, OBSERVER, RPC, RXJAVA);
      case "millrace-rpc-mutiny" -> add(out, STREAMS, OBSERVER, RPC, MUTINY);
      case "millrace-rpc-futures" -> add(out, STREAMS, OBSERVER, RPC, FUTURES);
      case "millrace-rpc-observer" -> add(out, STREAMS, OBSERVER, RPC);
      case "grpc-java", "grpc-java-rpc", "grpc-java-to-millrace", "millrace-grpc-stubs" ->
          add(out, STREAMS, OBSERVER, RPC, GRPC);
      case "rsocket-java" -> add(out, RSOCKET);
      default -> throw new IllegalArgumentException("no class path for system " + system);
    }
    return out;
  }

  @SafeVarargs
  private static void add(Set<String> to, List<String>... sets) {
    for (List<String> set : sets) {
      to.addAll(set);
    }
  }

  /**
   * The class path for a process measuring {@code system}: from the harness jar's directory when
   * the harness runs from its jar and the classes jar lies beside it, else this process's class
   * path with the jars of other systems left out (directories, such as a module's {@code
   * target/classes} under a test, are kept). Falls back to this process's whole class path when
   * neither can be read.
   */
  static String forSystem(String system) {
    Set<String> wanted = artifacts(system);
    List<String> kept = new ArrayList<>();
    for (String entry : entries()) {
      if (wanted(entry, wanted)) {
        kept.add(entry);
      }
    }
    return String.join(File.pathSeparator, kept);
  }

  private static boolean wanted(String entry, Set<String> wanted) {
    if (!entry.endsWith(".jar")) {
      return true; // a directory of classes
    }
    Matcher m = ARTIFACT.matcher(new File(entry).getName());
    return !m.matches() || wanted.contains(m.group(1));
  }

  /**
   * This process's class path with the harness jar replaced by its classes jar and the entries of
   * its manifest's {@code Class-Path} in its place.
   */
  private static List<String> entries() {
    List<String> out = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path classes = classesJar(entry);
      if (classes == null) {
        out.add(entry);
        continue;
      }
      out.add(classes.toString());
      Path dir = Path.of(entry).toAbsolutePath().getParent();
      for (String listed : manifestClassPath(entry)) {
        out.add(dir.resolve(listed).toString());
      }
    }
    return out;
  }

  /** The classes jar beside the harness jar {@code entry}, or null when entry is not that jar. */
  private static Path classesJar(String entry) {
    if (!entry.endsWith(".jar")) {
      return null;
    }
    Path own;
    try {
      own = Path.of(BenchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
    Path jar = Path.of(entry).toAbsolutePath();
    if (!jar.equals(own.toAbsolutePath())) {
      return null;
    }
    String name = jar.getFileName().toString();
    Path classes =
        jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + CLASSES_SUFFIX);
    return Files.isRegularFile(classes) ? classes : null;
  }

  private static List<String> manifestClassPath(String jar) {
    try (JarFile file = new JarFile(jar)) {
      Manifest manifest = file.getManifest();
      String classPath =
          manifest == null ? null : manifest.getMainAttributes().getValue("Class-Path");
      return classPath == null || classPath.isBlank()
          ? List.of()
          : List.of(classPath.trim().split(" +"));
    } catch (IOException e) {
      return List.of();
    }
  }
}
