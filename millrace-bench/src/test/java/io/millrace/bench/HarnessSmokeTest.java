package io.millrace.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A seconds-long run of the real harness (separate server and client JVMs for every system): checks
 * that it runs end to end and writes its CSV and chart, not how fast anything is.
 */
class HarnessSmokeTest {

  @Test
  void quickRun_everySystem_writesCsvRowsAndChart(@TempDir Path dir) throws Exception {
    File csv = dir.resolve("results.csv").toFile();
    File png = dir.resolve("chart.png").toFile();
    File seconds = dir.resolve("seconds.csv").toFile();
    int code =
        new CommandLine(new RunCommand())
            .execute(
                "--systems",
                "millrace,grpc-java,rsocket-java",
                "--interactions",
                "request-response,request-stream",
                "--sizes",
                "8",
                "--warmup",
                "1",
                "--duration",
                "2",
                "--skip-heap",
                "--skip-latency",
                "--resume",
                "--gc",
                "serial",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString(),
                "--png",
                png.toString(),
                "--seconds-csv",
                seconds.toString());
    assertThat(code).isZero();
    List<String> lines = Files.readAllLines(csv.toPath());
    assertThat(lines.get(0))
        .isEqualTo(
            "system,level,interaction,payload_bytes,heap,gc,msgs_per_sec_median,msgs_per_sec_min,"
                + "msgs_per_sec_max,alloc_bytes_per_msg_client,alloc_bytes_per_msg_server,resume,"
                + "transport,io,round,gc_share_client,gc_share_server,cpu_ns_per_msg_client,"
                + "cpu_ns_per_msg_server,jit_share_client,jit_share_server,class_path");
    assertThat(lines).hasSize(1 + 4 * 2); // --resume adds millrace-resume next to millrace
    for (String row : lines.subList(1, lines.size())) {
      String[] cells = row.split(",");
      assertThat(cells).hasSize(22);
      assertThat(cells[21]).as("each process had its own system's jars").isEqualTo("own");
      assertThat(cells[14]).isEqualTo("1");
      assertThat(Double.parseDouble(cells[15])).as("client GC share: " + row).isBetween(0.0, 1.0);
      assertThat(Double.parseDouble(cells[16])).as("server GC share: " + row).isBetween(0.0, 1.0);
      // A message costs each side some CPU, and less than the whole measured second.
      assertThat(Double.parseDouble(cells[17])).as("client CPU: " + row).isBetween(1.0, 1e9);
      assertThat(Double.parseDouble(cells[18])).as("server CPU: " + row).isBetween(1.0, 1e9);
      // HotSpot reports its compilers' time (each compilation's wall time, summed over compiler
      // threads when it ends, so a long one begun in the warm-up can pass the window's length).
      assertThat(Double.parseDouble(cells[19])).as("client JIT share: " + row).isNotNegative();
      assertThat(Double.parseDouble(cells[20])).as("server JIT share: " + row).isNotNegative();
      assertThat(cells[12]).isEqualTo("tcp");
      assertThat(cells[13]).isEqualTo("default");
      assertThat(cells[11]).isEqualTo(cells[0].equals("millrace-resume") ? "on" : "off");
      assertThat(cells[1]).isEqualTo("core");
      assertThat(cells[5]).isEqualTo("serial");
      assertThat(Double.parseDouble(cells[6])).as("messages flowed: " + row).isPositive();
    }
    assertThat(png).isNotEmpty();
    assertThat(Files.readAllBytes(png.toPath())).startsWith(0x89, 'P', 'N', 'G');
    List<String> perSecond = Files.readAllLines(seconds.toPath());
    assertThat(perSecond.get(0))
        .isEqualTo(
            "system,interaction,caller,payload_bytes,heap,side,epoch_millis,second,messages,meaning");
    for (String system : List.of("millrace", "grpc-java", "rsocket-java")) {
      for (String side : List.of("client", "server")) {
        assertThat(perSecond)
            .as(system + " " + side)
            .anyMatch(row -> row.startsWith(system + ",") && row.contains("," + side + ","));
      }
    }
  }

  @Test
  void transports_millraceOverTlsWebSocketAndUnixSockets_peersSkipped(@TempDir Path dir)
      throws Exception {
    File csv = dir.resolve("results.csv").toFile();
    int code =
        new CommandLine(new RunCommand())
            .execute(
                "--systems",
                "millrace,grpc-java",
                "--interactions",
                "request-stream",
                "--transport",
                "tls,ws,unix",
                "--sizes",
                "8",
                "--warmup",
                "1",
                "--duration",
                "1",
                "--skip-heap",
                "--skip-latency",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString());
    assertThat(code).isZero();
    List<String> rows = Files.readAllLines(csv.toPath());
    assertThat(rows.subList(1, rows.size()))
        .as("grpc-java runs over TCP only, so it is not in a run without tcp")
        .extracting(row -> row.split(",")[0] + "/" + row.split(",")[12])
        .containsExactly("millrace/tls", "millrace/ws", "millrace/unix");
    for (String row : rows.subList(1, rows.size())) {
      assertThat(Double.parseDouble(row.split(",")[6])).as("messages flowed: " + row).isPositive();
    }
  }

  @Test
  void applicationThreadCaller_millraceRequestResponseAndFireAndForget(@TempDir Path dir)
      throws Exception {
    File csv = dir.resolve("results.csv").toFile();
    int code =
        new CommandLine(new RunCommand())
            .execute(
                "--systems",
                "millrace",
                "--interactions",
                "request-response,fire-and-forget",
                "--caller",
                "thread",
                "--sizes",
                "8",
                "--warmup",
                "1",
                "--duration",
                "2",
                "--skip-heap",
                "--skip-latency",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString());
    assertThat(code).isZero();
    List<String> rows = Files.readAllLines(csv.toPath());
    assertThat(rows).hasSize(3);
    assertThat(rows.get(1)).startsWith("millrace,core,request-response (thread),8,");
    assertThat(rows.get(2)).startsWith("millrace,core,fire-and-forget (thread),8,");
    for (String row : rows.subList(1, 3)) {
      assertThat(Double.parseDouble(row.split(",")[6])).as("messages flowed: " + row).isPositive();
    }
  }

  @Test
  void everyFlavour_runsOnItsOwnClassPath(@TempDir Path dir) throws Exception {
    List<String> rows =
        quickRequestResponse(
            new RunCommand(),
            dir,
            "--systems",
            "millrace-reactor,millrace-rxjava,millrace-mutiny,millrace-observer,millrace-futures");
    assertThat(rows).hasSize(6);
    for (String row : rows.subList(1, 6)) {
      assertThat(Double.parseDouble(row.split(",")[6])).as("messages flowed: " + row).isPositive();
    }
  }

  @Test
  void rpcLevel_comparesWithGrpcJavaAndTheCore(@TempDir Path dir) throws Exception {
    RunCommand command = new RunCommand();
    List<String> rows =
        quickRequestResponse(
            command,
            dir,
            "--level",
            "rpc",
            "--systems",
            // every RPC system: each starts on its own class path (ClassPaths)
            "millrace,millrace-rpc,millrace-rpc-rxjava,millrace-rpc-mutiny,millrace-rpc-futures,"
                + "millrace-rpc-observer,grpc-java-rpc,grpc-java-to-millrace,"
                + "millrace-grpc-stubs");
    assertThat(rows).hasSize(10);
    for (String row : rows.subList(1, 10)) {
      assertThat(row.split(",")[1]).isEqualTo("rpc");
      assertThat(Double.parseDouble(row.split(",")[6])).as("messages flowed: " + row).isPositive();
    }
    // The RPC system's line carries its ratio to grpc-java and its share of the core.
    assertThat(command.report())
        .containsPattern("millrace-rpc-observer +[0-9,]+ \\([0-9, -]+\\) +x[0-9.]+ [0-9]+% core");
  }

  /**
   * Runs {@code command} with {@code systems} (its --level and --systems options) for 8-byte
   * request-response, 1 s warm-up and 2 s measured, and returns its CSV's lines.
   */
  private static List<String> quickRequestResponse(RunCommand command, Path dir, String... systems)
      throws Exception {
    File csv = dir.resolve("results.csv").toFile();
    List<String> args = new java.util.ArrayList<>(List.of(systems));
    args.addAll(
        List.of(
            "--interactions",
            "request-response",
            "--sizes",
            "8",
            "--warmup",
            "1",
            "--duration",
            "2",
            "--skip-heap",
            "--skip-latency",
            "--logs",
            dir.resolve("logs").toString(),
            "--csv",
            csv.toString()));
    assertThat(new CommandLine(command).execute(args.toArray(String[]::new))).isZero();
    return Files.readAllLines(csv.toPath());
  }
}
