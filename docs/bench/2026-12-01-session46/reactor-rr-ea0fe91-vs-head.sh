#!/bin/bash
# Reactor request-response: ea0fe91 (base) against 7be7f86 (head), alternated
for i in 1 2 3 4; do for v in base head; do
  if [ $v = base ]; then J=/tmp/wt-ea0/millrace-bench/target/millrace-bench.jar; else J=/tmp/bnew/millrace-bench.jar; fi
  echo "== $v round $i $(date +%T)"
  java -jar $J --systems millrace-reactor,millrace --interactions request-response --sizes 8 --warmup 10 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep "^\["
done; done
