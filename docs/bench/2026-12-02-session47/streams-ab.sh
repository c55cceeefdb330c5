#!/bin/bash
# Streams after the backlog limit and the doubling windows (d226274, /tmp/bH) against be2026d
# (/tmp/bB), alternated, the core's stream in each run as yardstick.
for round in 1 2 3; do
  for b in B H; do
    echo "=== round $round build $b"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace,millrace-rpc,millrace-rpc-futures --interactions request-stream --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\[ "
  done
done
