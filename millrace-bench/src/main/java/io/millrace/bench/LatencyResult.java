package io.millrace.bench;

/** Round-trip latency of one system at one load: ping-pong or a fixed open-loop rate. */
record LatencyResult(
    String system,
    String load,
    long targetRate,
    double achievedRate,
    long count,
    double p50,
    double p90,
    double p99,
    double p999,
    double max) {}
