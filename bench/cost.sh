#!/usr/bin/env bash
# What one create costs the server: CPU (user + system, from /proc/PID/stat) and bytes
# written to disk (/proc/PID/io, the WAL and the checkpoints' copies) per request, with
# distinct customIds, without one, or with the same one. The release binary on one
# core, wrk on the other, 20 000 invites preloaded, 2 s of warm-up, then one run.
# Bounded: DURATION seconds per measured run; the work directory is removed at the end.
#
#   bash bench/cost.sh                          # distinct, then none; DURATION=8
#   bash bench/cost.sh distinct none distinct   # any sequence of distinct, none, same
#   BIN=/elsewhere/agegate bash bench/cost.sh   # another build
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-8}
PRELOAD=${PRELOAD:-20000}
CONNECTIONS=${CONNECTIONS:-64}
modes=("$@")
((${#modes[@]})) || modes=(distinct none)
for m in "${modes[@]}"; do
  [[ $m =~ ^(distinct|none|same)$ ]] || { echo "cost: modes are distinct, none, same" >&2; exit 2; }
done
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "cost: wrk is missing (apt-get install wrk)" >&2; exit 1; }
if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin agegate; fi
bin=${BIN:-$PWD/target/release/agegate}
pin_load=(taskset -c 1)
source bench/lib.sh
# CPU ticks of the SQLite threads (writer, checkpointer, readers): the storage's share,
# apart from the HTTP side's, which the workloads share.
store_ticks() {
  local t sum=0
  for t in /proc/"$1"/task/*; do
    [[ $(cat "$t/comm" 2>/dev/null) == sqlite-* ]] && ((sum += $(awk '{print $14 + $15}' "$t/stat")))
  done
  echo "$sum"
}

for mode in "${modes[@]}"; do
  work=$(mktemp -d "$PWD/target/cost.XXXXXX")
  port=$(free_port)
  RUST_LOG=warn taskset -c 0 "$bin" --database-url "sqlite:$work/db" serve --listen "127.0.0.1:$port" 2>"$work/log" &
  server=$!
  trap 'kill "$server" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
  wait_up "$port"
  new_site "$bin" "sqlite:$work/db"
  preload "$port" "$PRELOAD" "$work/ids" >/dev/null
  run() { # seconds → wrk's output in $work/wrk
    next_block
    "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"$1s" --latency -s bench/wrk/invites.lua \
      "http://127.0.0.1:$port" -- create "$SITE" "$AUTH" "$work/ids" "$mode" "$ID_BLOCK" >"$work/wrk"
  }
  run 2
  cpu0=$(awk '{print $14 + $15}' "/proc/$server/stat")
  store0=$(store_ticks "$server")
  io0=$(awk '/^write_bytes/ {print $2}' "/proc/$server/io")
  run "$DURATION"
  cpu1=$(awk '{print $14 + $15}' "/proc/$server/stat")
  store1=$(store_ticks "$server")
  io1=$(awk '/^write_bytes/ {print $2}' "/proc/$server/io")
  grep -q "Non-2xx" "$work/wrk" && { echo "cost: non-2xx answers" >&2; cat "$work/wrk" >&2; exit 1; }
  python3 - "$mode" "$work/wrk" "$cpu0" "$cpu1" "$io0" "$io1" "$(getconf CLK_TCK)" "$store0" "$store1" <<'PY'
import re, sys
mode, wrk, cpu0, cpu1, io0, io1, tck, store0, store1 = sys.argv[1:]
text = open(wrk).read()
n = int(re.search(r"(\d+) requests in", text).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
p99 = re.search(r"^\s+99%\s+(\S+)", text, re.M).group(1)
cpu = (int(cpu1) - int(cpu0)) / int(tck) / n * 1e6
kb = (int(io1) - int(io0)) / 1024 / n
store = (int(store1) - int(store0)) / int(tck) / n * 1e6
print(f"{mode:9} {rps:9.0f} req/s  p99 {p99:>8}  CPU {cpu:5.1f} µs/create, of which storage {store:5.1f}  written {kb:5.2f} KB/create")
PY
  kill "$server"; wait "$server" 2>/dev/null || true
  rm -rf "$work"
done
