#!/bin/sh
# The spike's measurements, one VM at a time, appended as JSON lines to $W/results.jsonl.
# Limits: the lambda profile's /tmp limits (platform-lambda@2026-11-23) scaled by
# (mem/2048)^0.7343 below 2048 MB: 128 MB -> 984 IOPS, 4,349,242 B/s; 2048 MB -> 7538, 33,311,862.
# CPU share: mem / 1769 vCPU over a 20 ms period (cpu-tiers, cpu_period).
set -u
W=${W:-/tmp/vm26}; ACCEL=${ACCEL:-tcg}; HERE=$(cd "$(dirname "$0")" && pwd)
R=$W/results.jsonl
vm() { nice -n 19 python3 "$HERE/vm.py" --w "$W" --accel "$ACCEL" "$@" >> "$R"; }
printf 'uname -r\n/usr/bin/dd --version | head -1\nmount | grep /tmp\n' > $W/job-hello.sh
case "${1:-all}" in
boots|all)
  for i in 1 2 3 4 5 6 7 8 9 10; do vm --mem 128 --job $W/job-hello.sh --timeout 120 --tag boot128; done
  for i in 1 2 3; do vm --mem 2048 --job $W/job-hello.sh --timeout 120 --tag boot2048; done ;;
esac
case "${1:-all}" in
cells|all)
  for rep in 1 2; do
  vm --mem 128 --job "$HERE/job-dd.sh" --env N=5 --timeout 600 --tag cells128-free
  vm --mem 128 --iops 984 --bps 4349242 --quota 0.0724 --job "$HERE/job-dd.sh" --env N=5 --timeout 600 --tag cells128-lambda
  vm --mem 2048 --job "$HERE/job-dd.sh" --env N=5 --env BIG=1 --timeout 600 --tag cells2048-free
  vm --mem 2048 --iops 7538 --bps 33311862 --quota 1.158 --job "$HERE/job-dd.sh" --env N=5 --env BIG=1 --timeout 600 --tag cells2048-lambda
  done ;;
esac
