#!/bin/bash
# RPC Reactor request-response, 1g and 20m, Netty's low-memory allocator mode as Netty picks it (default) or off
J=/work/main/millrace-bench/target/millrace-bench.jar
for i in 1 2; do for v in default lowmem-off; do
  echo "== $v round $i $(date +%T)"
  if [ $v = default ]; then O=""; else O="-Dio.netty.allocator.lowMemory=false"; fi
  java -jar $J --level rpc --systems millrace-rpc,millrace --interactions request-response --sizes 8 --warmup 10 --duration 5 --rounds 1 --skip-latency --heap 20m ${O:+--client-jvm-opts=$O --server-jvm-opts=$O} 2>&1 | grep -E "^\[|^  request-response .*%"
done; done
