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
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString(),
                "--png",
                png.toString());
    assertThat(code).isZero();
    List<String> lines = Files.readAllLines(csv.toPath());
    assertThat(lines.get(0))
        .isEqualTo(
            "system,level,interaction,payload_bytes,heap,msgs_per_sec_median,msgs_per_sec_min,"
                + "msgs_per_sec_max,alloc_bytes_per_msg_client,alloc_bytes_per_msg_server");
    assertThat(lines).hasSize(1 + 3 * 2);
    for (String row : lines.subList(1, lines.size())) {
      String[] cells = row.split(",");
      assertThat(cells).hasSize(10);
      assertThat(cells[1]).isEqualTo("core");
      assertThat(Double.parseDouble(cells[5])).as("messages flowed: " + row).isPositive();
    }
    assertThat(png).isNotEmpty();
    assertThat(Files.readAllBytes(png.toPath())).startsWith(0x89, 'P', 'N', 'G');
  }
}
