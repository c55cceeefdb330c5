#!/bin/bash
for round in 1 2 3; do
  for v in newbench mutbench; do
    echo "=== $v round $round"
    java -jar /tmp/$v/millrace-bench.jar --systems millrace-observer --interactions request-channel --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "msg/s"
  done
done
