#!/bin/bash
# alternated A/B of the per-connection unread budget: the blocking readers' per-message path
# (core BlockingStream: millrace-futures; RPC MessageIterator: millrace-rpc-futures) and the Reactor
# flavours (millrace, millrace-rpc), request-stream and request-channel, 8 B.
# Builds: /tmp/bA = ca884ba (before the budget); /tmp/bB = 8115f35. Each is
# millrace-bench/target/{millrace-bench.jar,millrace-bench-classes.jar,lib} of a
# `./mvnw -q -B package -Dmaven.test.skip=true -o` build.
for i in 1 2 3; do
  for b in A B; do
    echo "== build $b pair $i $(date +%T)"
    java -jar /tmp/b$b/millrace-bench.jar --level rpc --systems millrace-rpc-futures,millrace-rpc,millrace-futures,millrace --interactions request-stream,request-channel --sizes 8 --warmup 6 --duration 4 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "^\["
  done
done
