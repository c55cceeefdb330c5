package io.millrace.bench;

/** The interactions the harness measures, with their command-line names. */
public enum Interaction {
  REQUEST_RESPONSE("request-response"),
  FIRE_AND_FORGET("fire-and-forget"),
  REQUEST_STREAM("request-stream"),
  REQUEST_CHANNEL("request-channel");

  public final String cliName;

  Interaction(String cliName) {
    this.cliName = cliName;
  }

  public static Interaction parse(String name) {
    for (Interaction interaction : values()) {
      if (interaction.cliName.equals(name)) {
        return interaction;
      }
    }
    throw new IllegalArgumentException("unknown interaction: " + name);
  }
}
