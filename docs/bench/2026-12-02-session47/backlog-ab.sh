#!/bin/bash
# A/B of the backlog accounting on the blocking readers' hot path: be2026d (before) against head,
# alternated, each run with the core's stream as the yardstick.
for round in 1 2 3; do
  for b in B H; do
    echo "=== round $round build $b rpc"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace,millrace-rpc-futures --interactions request-stream --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\[ "
    echo "=== round $round build $b core"
    java -jar /tmp/b$b/millrace-bench.jar --systems millrace,millrace-futures --interactions request-stream --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\[ "
  done
done
