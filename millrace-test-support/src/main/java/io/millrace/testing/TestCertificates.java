package io.millrace.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The fixed test certificates (see {@code io/millrace/testing/tls/generate.sh}) as files, copied
 * out of the jar once per JVM: a CA ({@code ca.pem}), a server certificate for localhost and
 * 127.0.0.1 ({@code server.pem}/{@code .key}) and a second one for the same names ({@code
 * server-renewed}), one for another name ({@code wrong-host}), a client certificate from the CA
 * ({@code client}), and a client certificate from another CA ({@code other-client}, {@code
 * other-ca.pem}).
 */
public final class TestCertificates {
  private static Path directory;

  private TestCertificates() {}

  /** The file {@code name}, for example {@code "server.pem"}. */
  public static synchronized Path path(String name) {
    try {
      if (directory == null) {
        directory = Files.createTempDirectory("millrace-tls");
        directory.toFile().deleteOnExit();
      }
      Path file = directory.resolve(name);
      if (!Files.exists(file)) {
        try (InputStream in =
            TestCertificates.class.getResourceAsStream("/io/millrace/testing/tls/" + name)) {
          if (in == null) {
            throw new IllegalArgumentException("no test certificate file " + name);
          }
          Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
        }
        file.toFile().deleteOnExit();
      }
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
