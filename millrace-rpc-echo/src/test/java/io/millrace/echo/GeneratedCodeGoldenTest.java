package io.millrace.echo;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Pins what Millrace's protoc plugin generates for echo.proto: the build ran protoc with the plugin
 * (as a user's build does), and the result must equal the golden copy. After a deliberate change to
 * the generator, refresh the copies with {@code -Dmillrace.golden.update=true} and review the diff.
 */
class GeneratedCodeGoldenTest {
  private static final Path GENERATED =
      Path.of("target/generated-sources/protobuf/io/millrace/echo/v1");
  private static final Path GOLDEN = Path.of("src/test/resources/golden");

  @ParameterizedTest
  @ValueSource(
      strings = {
        "EchoServiceRpc.java",
        "EchoServiceReactor.java",
        "EchoServiceRxJava.java",
        "EchoServiceMutiny.java",
        "EchoServiceFutures.java",
        "EchoServiceObserver.java"
      })
  void generatedCode_isTheGoldenCopy(String file) throws IOException {
    String generated = Files.readString(GENERATED.resolve(file), StandardCharsets.UTF_8);
    Path golden = GOLDEN.resolve(file + ".txt");
    if (Boolean.getBoolean("millrace.golden.update")) {
      Files.createDirectories(GOLDEN);
      Files.writeString(golden, generated, StandardCharsets.UTF_8);
    }
    assertThat(generated).isEqualTo(Files.readString(golden, StandardCharsets.UTF_8));
  }
}
