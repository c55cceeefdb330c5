package io.millrace.bench.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Short runs of the scenarios as a user starts them (separate server and client JVMs for each
 * system): they run end to end, every system answers correctly (the CRUD client checks each
 * answer), and the CSV and chart are written. Not how fast anything is.
 */
class ScenarioSmokeTest {

  @Test
  void crud_everySystem(@TempDir Path dir) throws Exception {
    File csv = dir.resolve("crud.csv").toFile();
    File png = dir.resolve("crud.png").toFile();
    int code =
        new CommandLine(new CrudCommand())
            .execute(
                "--ops",
                "300",
                "--warmup-ops",
                "50",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString(),
                "--png",
                png.toString());
    assertThat(code).isZero();
    List<String> rows = Files.readAllLines(csv.toPath());
    assertThat(rows.get(0)).startsWith("system,operation,calls,");
    assertThat(rows).hasSize(1 + 3 * 4);
    for (String row : rows.subList(1, rows.size())) {
      String[] cells = row.split(",");
      assertThat(List.of("millrace", "grpc-java", "rest")).contains(cells[0]);
      assertThat(cells[2]).as(row).isEqualTo("300");
      assertThat(Double.parseDouble(cells[5])).as("a median round trip: " + row).isPositive();
    }
    assertThat(Files.readAllBytes(png.toPath())).startsWith(0x89, 'P', 'N', 'G');
  }

  @Test
  void smallHeap_everySystemAtTwentyMegabytes(@TempDir Path dir) throws Exception {
    File csv = dir.resolve("small-heap.csv").toFile();
    File png = dir.resolve("small-heap.png").toFile();
    int code =
        new CommandLine(new SmallHeapCommand())
            .execute(
                "--clients",
                "4",
                "--delays-us",
                "100",
                "--heaps",
                "20m",
                "--warmup",
                "1",
                "--duration",
                "1",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString(),
                "--png",
                png.toString());
    assertThat(code).isZero();
    List<String> rows = Files.readAllLines(csv.toPath());
    assertThat(rows).hasSize(1 + 3);
    for (String row : rows.subList(1, rows.size())) {
      String[] cells = row.split(",");
      assertThat(Double.parseDouble(cells[5])).as("calls flowed: " + row).isPositive();
      // A handler that waits 100 us cannot answer sooner.
      assertThat(Double.parseDouble(cells[7])).as("median: " + row).isGreaterThan(100);
      assertThat(cells[11]).as("errors: " + row).isEqualTo("0");
    }
    assertThat(Files.readAllBytes(png.toPath())).startsWith(0x89, 'P', 'N', 'G');
  }

  @Test
  void latencyLoad_everySystemOneStep(@TempDir Path dir) throws Exception {
    File csv = dir.resolve("latency-load.csv").toFile();
    File png = dir.resolve("latency-load.png").toFile();
    int code =
        new CommandLine(new LatencyLoadCommand())
            .execute(
                "--connections",
                "2",
                "--sizes",
                "48",
                "--start-rate",
                "2000",
                "--max-steps",
                "1",
                "--warmup",
                "1",
                "--duration",
                "1",
                "--logs",
                dir.resolve("logs").toString(),
                "--csv",
                csv.toString(),
                "--png",
                png.toString());
    assertThat(code).isZero();
    List<String> rows = Files.readAllLines(csv.toPath());
    assertThat(rows).hasSize(1 + 3);
    for (String row : rows.subList(1, rows.size())) {
      String[] cells = row.split(",");
      assertThat(cells[1]).isEqualTo("2");
      assertThat(cells[3]).isEqualTo("2000");
      assertThat(Double.parseDouble(cells[4])).as("answers: " + row).isPositive();
      assertThat(Double.parseDouble(cells[13])).as("server CPU measured: " + row).isPositive();
    }
    assertThat(Files.readAllBytes(png.toPath())).startsWith(0x89, 'P', 'N', 'G');
  }
}
