#!/bin/bash
# A/B: 03a00c3 (old) vs 7e3fbec (new), observer flavour streams and channels, core and RPC level
for round in 1 2; do
  for v in old new; do
    if [ $v = old ]; then J=/tmp/old/millrace-bench/target/millrace-bench.jar; else J=/work/main/millrace-bench/target/millrace-bench.jar; fi
    echo "=== $v round $round core"
    java -jar $J --systems millrace-observer --interactions request-stream,request-channel --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "msg/s" 
    echo "=== $v round $round rpc"
    java -jar $J --level rpc --systems millrace-rpc-observer --interactions request-stream,request-channel --sizes 8 --warmup 8 --duration 5 --rounds 1 --skip-heap --skip-latency 2>&1 | grep -E "msg/s"
  done
done
