#!/usr/bin/env bash
# Soak: constant load for MINUTES, sampling the server's memory. A documented run, not
# part of CI.
#
#   bash scripts/proofs/soak.sh [MINUTES] [--backend sqlite|postgres]     # 30, sqlite
#   RATE=600 bash scripts/proofs/soak.sh 30                               # a fixed rate
#
# Without RATE, the capacity is measured first (CAPACITY_SECONDS, default 10, at full
# speed with CONCURRENCY clients, default 16) and the soak runs at half of it. One unit
# of load is a create followed by a GET of the created invite (scripts/proofs/load.py
# --get), so RATE=600 means 600 creates and 600 reads per second. Every 10 s the server's
# RSS, open file descriptors and threads, and the database size are appended to a CSV
# (CSV=path, default /tmp/agegate-soak-DATE-TIME.csv; it is kept). At the end it prints the RSS
# at start (idle), after the first minute (warm), at its peak and at the end, and fails
# if any request failed or the end RSS is more than MAX_GROWTH_MIB (default 64) above the
# warm one. Loopback only; bounded by MINUTES (at most 1440).
set -euo pipefail
CSV=$(realpath -m "${CSV:-${TMPDIR:-/tmp}/agegate-soak-$(date +%Y%m%d-%H%M%S).csv}")
cd "$(dirname "$0")/../.."

MINUTES=30
BACKEND=sqlite
while [[ $# -gt 0 ]]; do
  case $1 in
    --backend) BACKEND=${2:?--backend needs sqlite or postgres}; shift 2 ;;
    --backend=*) BACKEND=${1#*=}; shift ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) [[ $1 =~ ^[0-9]+$ && $1 -ge 1 && $1 -le 1440 ]] || { echo "soak: MINUTES must be 1..1440" >&2; exit 2; }
       MINUTES=$1; shift ;;
  esac
done
CONCURRENCY=${CONCURRENCY:-16}
CAPACITY_SECONDS=${CAPACITY_SECONDS:-10}
MAX_GROWTH_MIB=${MAX_GROWTH_MIB:-64}

PROOF=soak
source scripts/proofs/lib.sh
build
setup_database "$BACKEND"
create_site
start_server
site_args=(--site="$SITE_ID" --user="$SITE_USER" --password="$SITE_PASS")
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }
db_bytes() {
  if [[ $BACKEND == sqlite ]]; then
    du -cb "$WORK"/agegate.db* 2>/dev/null | awk 'END {print $1}'
  else
    du -sb "$WORK/pg" 2>/dev/null | awk '{print $1}'
  fi
}

rss_idle=$(rss_kib "$SERVER_PID")
if [[ -z ${RATE:-} ]]; then
  say "measuring capacity: ${CAPACITY_SECONDS}s at full speed, $CONCURRENCY clients, create+get"
  cap=$(python3 scripts/proofs/load.py create --port "$SERVER_PORT" "${site_args[@]}" --get \
    --concurrency "$CONCURRENCY" --count 10000000 --seconds "$CAPACITY_SECONDS" --prefix capacity)
  capacity=$(field "$cap" per_second)
  RATE=$(awk -v c="$capacity" 'BEGIN { r = int(c / 2); print (r < 1 ? 1 : r) }')
  say "capacity $capacity creates+gets per second; soaking at $RATE"
fi
[[ $RATE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "RATE must be a number"

seconds=$((MINUTES * 60))
count=$(awk -v r="$RATE" -v s="$seconds" 'BEGIN { printf "%d", r * s + 1 }')
say "$MINUTES min at $RATE per second ($BACKEND, $CONCURRENCY clients), RSS to $CSV"
python3 scripts/proofs/load.py create --port "$SERVER_PORT" "${site_args[@]}" --get \
  --concurrency "$CONCURRENCY" --rate "$RATE" --count "$count" --seconds "$seconds" \
  --prefix soak >"$WORK/soak.json" &
load_pid=$!
EXTRA_PIDS+=("$load_pid")

echo "elapsed_s,rss_kib,fds,threads,db_bytes" >"$CSV"
sample() { # elapsed seconds
  local fds threads
  fds=$(ls "/proc/$SERVER_PID/fd" 2>/dev/null | wc -l)
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$SERVER_PID/status" 2>/dev/null || echo 0)
  echo "$1,$(rss_kib "$SERVER_PID"),$fds,$threads,$(db_bytes)" >>"$CSV"
}
start=$SECONDS
sample 0
# One sample every 10 s while the load runs; bounded by the soak's length plus a minute.
while kill -0 "$load_pid" 2>/dev/null && ((SECONDS - start < seconds + 60)); do
  sleep 10
  sample $((SECONDS - start))
done
wait "$load_pid" || die "the load generator failed"
EXTRA_PIDS=()
kill -0 "$SERVER_PID" 2>/dev/null || die "the server died during the soak"
term_server

python3 - "$CSV" "$WORK/soak.json" "$rss_idle" "$MAX_GROWTH_MIB" "$RATE" <<'PY'
import csv, json, sys
path, summary_path, idle, max_growth, rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rows = [{k: int(v) for k, v in r.items()} for r in csv.DictReader(open(path))]
load = json.load(open(summary_path))
mib = lambda kib: f"{kib / 1024:.1f} MiB"
warm = next((r for r in rows if r["elapsed_s"] >= 60), rows[-1])
peak = max(rows, key=lambda r: r["rss_kib"])
end = rows[-1]
growth = end["rss_kib"] - warm["rss_kib"]
statuses = load["statuses"]
bad = sum(n for s, n in statuses.items() if s not in ("200", "get-200")) + load["errors"]
print(f"== soak: {load['seconds'] / 60:.1f} min at {rate}/s target, {load['per_second']}/s achieved; "
      f"{load['acked']} invites created and read back; failed requests {bad}; "
      f"create p50 {load['p50_ms']} ms, p99 {load['p99_ms']} ms")
print(f"   RSS idle {mib(idle)}, at {warm['elapsed_s']} s {mib(warm['rss_kib'])}, "
      f"peak {mib(peak['rss_kib'])} (at {peak['elapsed_s']} s), end {mib(end['rss_kib'])}; "
      f"end - warm {growth / 1024:+.1f} MiB; fds {rows[0]['fds']} -> {end['fds']}, "
      f"threads {rows[0]['threads']} -> {end['threads']}, database {end['db_bytes'] / 2**20:.0f} MiB")
print(f"   samples: {path}")
ok = bad == 0 and growth <= max_growth * 1024
if not ok:
    print(f"soak: FAILED (failed requests {bad}, statuses {statuses}, growth {growth} KiB)", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
