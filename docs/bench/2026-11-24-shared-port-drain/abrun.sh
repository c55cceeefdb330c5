#!/bin/bash
# $1 = A or B, $2 = round
cp /tmp/grpc-$1.jar /work/main/millrace-cli/target/lib/millrace-grpc-0.1.0-SNAPSHOT.jar
taskset -c 1 java -jar /work/main/millrace-cli/target/millrace-cli.jar echo-server --port 7979 --grpc-shared > /tmp/es-$1.log 2>&1 &
pid=$!
sleep 4
proto=""
taskset -c 0 /tmp/gotools/ghz --insecure --call millrace.echo.v1.EchoService/Echo -d '{"payload":"aGk="}' -c 50 --connections 2 -z 15s 127.0.0.1:7979 2>&1 | grep -E "Requests/sec|Average|99 %" | tr '\n' ' '
echo " [$1 round $2]"
kill $pid; wait $pid 2>/dev/null
