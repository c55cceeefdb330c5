#!/bin/bash
# alternated A/B of the per-connection unread budget at its last code, the order flipped each pair:
# the blocking readers' per-message path (core BlockingStream: millrace-futures; RPC
# MessageIterator: millrace-rpc-futures) against the core engine (millrace, which touches no
# budget), request-stream, 8 B. Builds: /tmp/bA = ca884ba (before the budget); /tmp/bB = c255896 with one thread check a message again (admitOnLoop), the commit after it.
# Each is millrace-bench/target/{millrace-bench.jar,millrace-bench-classes.jar,lib} of a
# `./mvnw -q -B package -Dmaven.test.skip=true -o` build.
for i in 1 2 3 4; do
  if [ $((i % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
  for b in $order; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc-futures,millrace-futures,millrace --interactions request-stream --sizes 8 --warmup 6 --duration 4 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done
