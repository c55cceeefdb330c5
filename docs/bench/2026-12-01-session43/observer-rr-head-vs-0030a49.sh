#!/bin/bash
for round in 1 2 3; do
  for v in new old; do
    if [ $v = old ]; then J=/tmp/old/millrace-bench/target/millrace-bench.jar; else J=/work/main/millrace-bench/target/millrace-bench.jar; fi
    echo "=== $v round $round"
    java -jar $J --systems millrace-observer --interactions request-response --sizes 8 --warmup 10 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "msg/s"
  done
done
