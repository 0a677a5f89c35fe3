#!/usr/bin/env bash
# Where agegate's time goes under one workload: the release binary on one core, wrk on
# the other, `perf record` of the server for DURATION seconds; prints the hottest
# functions (self time) and the share of time per thread. Bounded by DURATION.
#
#   bash bench/profile.sh create          # or get, mixed, create-no-id, create-same-id
#                                         # (bench/run.sh's workloads); PRELOAD=20000 DURATION=10
#   BIN=/elsewhere/agegate bash bench/profile.sh create   # another build (before/after)
#
# perf is Debian's `linux-perf` package (installed here when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
WORKLOAD=${1:-create}
[[ $WORKLOAD =~ ^(create|get|mixed|create-no-id|create-same-id)$ ]] \
  || { echo "profile: workload is create, get, mixed, create-no-id or create-same-id" >&2; exit 2; }
mode=$WORKLOAD custom_ids=distinct
case $WORKLOAD in
  create-no-id) mode=create custom_ids=none ;;
  create-same-id) mode=create custom_ids=same ;;
esac
PRELOAD=${PRELOAD:-20000}
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
TOP=${TOP:-40}

command -v perf >/dev/null || apt-get install -y -qq linux-perf >/dev/null 2>&1 \
  || { echo "profile: perf is missing (apt-get install linux-perf)" >&2; exit 1; }
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "profile: wrk is missing (apt-get install wrk)" >&2; exit 1; }
if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin agegate; fi
bin=${BIN:-$PWD/target/release/agegate}
work=$(mktemp -d "$PWD/target/profile.XXXXXX")
trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; [[ ${KEEP:-0} == 1 ]] && echo "kept $work" || rm -rf "$work"' EXIT
pin_load=(taskset -c 1)
source bench/lib.sh
port=$(free_port)
RUST_LOG=warn taskset -c 0 "$bin" --database-url "sqlite:$work/db" serve --listen "127.0.0.1:$port" 2>"$work/log" &
server=$!
wait_up "$port"
new_site "$bin" "sqlite:$work/db"
# Stored invites to read, through the API (as bench/run.sh does).
preload "$port" "$PRELOAD" "$work/ids.all"

taskset -c 1 wrk -t1 -c"$CONNECTIONS" -d"$((DURATION + 2))s" --latency -s bench/wrk/invites.lua \
  "http://127.0.0.1:$port" -- "$mode" "$SITE" "$AUTH" "$work/ids.all" "$custom_ids" "$((ID_BLOCK + 1))" >"$work/wrk" &
load=$!
sleep 1
perf record -q -F 1999 -g -p "$server" -o "$work/perf.data" -- sleep "$DURATION" 2>/dev/null
wait "$load"
grep -E "Requests/sec|99%" "$work/wrk"
echo "== time per thread"
perf report -i "$work/perf.data" --no-children --sort comm --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -12
echo "== hottest functions (self time)"
perf report -i "$work/perf.data" --no-children --sort symbol --stdio -g none 2>/dev/null \
  | grep -E '^ +[0-9]' | head -"$TOP"
