package io.millrace.bench;

import java.io.File;
import java.io.IOException;
import java.net.URI;
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

  /** protobuf's JSON format, for the REST baseline. */
  private static final List<String> JSON =
      List.of(
          "protobuf-java-util",
          "gson",
          "guava",
          "failureaccess",
          "listenablefuture",
          "j2objc-annotations",
          "jsr305",
          "error_prone_annotations");

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
      case "grpc-java", "grpc-java-rpc" -> add(out, STREAMS, OBSERVER, RPC, GRPC);
      // served by the Reactor flavour of the RPC
      case "grpc-java-to-millrace", "millrace-grpc-stubs" ->
          add(out, STREAMS, OBSERVER, RPC, GRPC, REACTOR);
      case "rsocket-java" -> add(out, RSOCKET);
      default -> throw new IllegalArgumentException("no class path for system " + system);
    }
    return out;
  }

  /**
   * The artifacts of a process started with {@code args} (a harness command, then its options), or
   * null when its command is not one this class knows: the measured matrix's {@code serve} and
   * {@code drive}, the idle-connection pass's server and client and the latency scenario's driver
   * take the matrix's systems; the CRUD and small-heap scenarios take their own (millrace,
   * grpc-java, rest).
   */
  static Set<String> artifacts(List<String> args) {
    if (args.isEmpty()) {
      return null;
    }
    int at = args.indexOf("--system");
    if (at < 0 || at + 1 >= args.size()) {
      return null;
    }
    String system = args.get(at + 1);
    return switch (args.get(0)) {
      case "serve", "drive", "latency-load-drive", "idle-serve", "idle-drive" -> artifacts(system);
      case "scenario-serve", "crud-drive", "small-heap-drive" -> scenarioArtifacts(system);
      default -> null;
    };
  }

  /** The scenarios' systems: each also has the chat example's service and the RPC runtime. */
  static Set<String> scenarioArtifacts(String system) {
    Set<String> out = new LinkedHashSet<>(HARNESS);
    out.addAll(TRANSPORT);
    add(out, List.of("millrace-example-chat"), STREAMS, OBSERVER, RPC);
    switch (system) {
      case "millrace" -> add(out, FUTURES, REACTOR);
      case "grpc-java" -> add(out, GRPC);
      case "rest" -> add(out, JSON);
      default -> throw new IllegalArgumentException("no class path for scenario system " + system);
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
   * The class path for a process measuring {@code system}: the harness's classes jar and the
   * system's jars from the harness jar's manifest when the harness runs from its jar, else this
   * process's class path with the jars of other systems left out (directories, such as a module's
   * {@code target/classes} under a test, are kept).
   *
   * @throws IllegalStateException when the harness runs from its jar and the classes jar is not
   *     beside it: the whole class path would come back through the harness jar's manifest
   */
  static String forSystem(String system) {
    return forArtifacts(artifacts(system));
  }

  /**
   * The class path of a process started with {@code args}: its system's ({@link #artifacts(List)}),
   * or this process's whole class path for a command this class does not know.
   */
  static String forProcess(List<String> args) {
    Set<String> wanted = artifacts(args);
    return wanted == null ? System.getProperty("java.class.path") : forArtifacts(wanted);
  }

  private static String forArtifacts(Set<String> wanted) {
    List<String> kept = new ArrayList<>();
    Path own = ownJar();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (own != null && sameFile(Path.of(entry), own)) {
        Path classes = classesJar(own);
        if (!Files.isRegularFile(classes)) {
          throw new IllegalStateException(
              classes + " is missing: rebuild the harness, or run with --shared-class-path");
        }
        kept.add(classes.toString());
        for (Path listed : manifestClassPath(own)) {
          if (wanted(listed.toString(), wanted)) {
            kept.add(listed.toString());
          }
        }
      } else if (wanted(entry, wanted)) {
        kept.add(entry);
      }
    }
    return String.join(File.pathSeparator, kept);
  }

  private static boolean wanted(String entry, Set<String> wanted) {
    if (!entry.endsWith(".jar")) {
      return true; // a directory of classes
    }
    String artifact = artifact(entry);
    return artifact == null || wanted.contains(artifact);
  }

  /** The artifact of a jar named ARTIFACT-VERSION[-CLASSIFIER].jar, or null. */
  static String artifact(String jar) {
    Matcher m = ARTIFACT.matcher(new File(jar).getName());
    return m.matches() ? m.group(1) : null;
  }

  /** The jar this harness's classes were loaded from, or null when they come from a directory. */
  private static Path ownJar() {
    try {
      Path own =
          Path.of(BenchMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return Files.isRegularFile(own) ? own : null;
    } catch (URISyntaxException | RuntimeException e) {
      return null;
    }
  }

  private static boolean sameFile(Path a, Path b) {
    try {
      return Files.isRegularFile(a) && Files.isSameFile(a, b);
    } catch (IOException e) {
      return false;
    }
  }

  /** The jar of the same classes without the manifest's class path, built beside the harness. */
  static Path classesJar(Path harnessJar) {
    String name = harnessJar.getFileName().toString();
    return harnessJar.resolveSibling(
        name.substring(0, name.length() - ".jar".length()) + CLASSES_SUFFIX);
  }

  /** The entries of a jar's manifest {@code Class-Path}: URLs relative to the jar. */
  static List<Path> manifestClassPath(Path jar) {
    try (JarFile file = new JarFile(jar.toFile())) {
      Manifest manifest = file.getManifest();
      String classPath =
          manifest == null ? null : manifest.getMainAttributes().getValue("Class-Path");
      if (classPath == null || classPath.isBlank()) {
        return List.of();
      }
      URI base = jar.toAbsolutePath().toUri();
      List<Path> out = new ArrayList<>();
      for (String url : classPath.trim().split(" +")) {
        out.add(Path.of(base.resolve(url)));
      }
      return out;
    } catch (IOException | IllegalArgumentException e) {
      return List.of();
    }
  }
}
