#!/usr/bin/env bash
# What a durable create can cost on this machine at the least: agegate's creates against
# the ceiling (no storage) and the *floor* (the ceiling storing one row per create in
# SQLite, group commits, an fsync before each answer; examples/ceiling.rs), in
# alternating rounds of the same run. The floor runs three ways: as SQLite comes, with
# an index on the customId, and without checkpoints (the WAL grows without bound: a
# bound, not a server). Every create carries a customId of its own (run.sh's realistic
# workload); every server starts from an empty database. With --postgres the floor and
# agegate store in a throwaway PostgreSQL cluster instead (as in run.sh: fsync on,
# brought to the state of one in service, on the servers' CPU); there the floor runs
# plain and with the index. With --workload get each server first stores 20,000 invites
# through its API, then answers status reads of them: the floor finds each in memory (a
# hash map of what it stored), the least a status read can do.
# Bounded: ROUNDS × 3–5 servers × (2 s of warm-up + DURATION s, and for get a preload of
# 20,000 creates); loopback only; the work directory (and cluster) is removed at the end.
#
#   bash bench/floor.sh                       # ROUNDS=3 DURATION=8
#   ROUNDS=5 DURATION=6 bash bench/floor.sh --postgres
#   bash bench/floor.sh --workload get
set -euo pipefail
cd "$(dirname "$0")/.."
POSTGRES=no WORKLOAD=create
while (($#)); do
  case $1 in
    --postgres) POSTGRES=yes ;;
    --workload) WORKLOAD=${2:-}; shift ;;
    *) echo "floor: options are --postgres and --workload create|get" >&2; exit 2 ;;
  esac
  shift
done
[[ $WORKLOAD =~ ^(create|get)$ ]] || { echo "floor: the workloads are create and get" >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-64}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "floor: wrk is missing (apt-get install wrk)" >&2; exit 1; }
cargo build --release --quiet --bin agegate --example ceiling
bin=$PWD/target/release/agegate
ceiling=$PWD/target/release/examples/ceiling
pin_load=(taskset -c 1)
pin_pg=(taskset -c 0)
work=$(mktemp -d "$PWD/target/floor.XXXXXX")
server=
trap '[[ -n $server ]] && kill "$server" 2>/dev/null; wait 2>/dev/null; stop_pg; rm -rf "$work"' EXIT
source bench/lib.sh
: >"$work/ids"
if [[ $POSTGRES == yes ]]; then
  [[ -n $(pg_bin) ]] || { echo "floor: PostgreSQL is missing (bash scripts/setup.sh)" >&2; exit 1; }
  start_pg
fi
fresh=0

start() { # server → PORT, server (its pid); a fresh database each time
  local db
  fresh=$((fresh + 1))
  if [[ $1 == ceiling ]]; then
    : # stores nothing
  elif [[ $POSTGRES == yes ]]; then
    psql -X -q "postgres://postgres@127.0.0.1:$PG_PORT/postgres" -c "CREATE DATABASE fresh$fresh"
    db=postgres://postgres@127.0.0.1:$PG_PORT/fresh$fresh
  else
    rm -rf "$work/db" && mkdir "$work/db"
    db=$work/db/$1.db
  fi
  PORT=$(free_port)
  case $1 in
    agegate)
      [[ $POSTGRES == yes ]] || db=sqlite:$db
      new_site "$bin" "$db"
      RUST_LOG=warn taskset -c 0 "$bin" --database-url "$db" serve \
        --listen "127.0.0.1:$PORT" 2>>"$work/agegate.log" &
      ;;
    *)
      SITE=bench-site AUTH=$(printf 'bench:secret' | base64 -w0)
      local store=()
      case $1 in
        floor) store=(--store "$db") ;;
        floor-index) store=(--store "$db" --index) ;;
        floor-no-checkpoint) store=(--store "$db" --no-checkpoint) ;;
      esac
      taskset -c 0 "$ceiling" "127.0.0.1:$PORT" "$SITE" bench secret "${store[@]}" 2>>"$work/ceiling.log" &
      ;;
  esac
  server=$!
  wait_up "$PORT"
}

load() { # seconds [--latency] → wrk's output; reads the ids of the last preload
  next_block
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"$1s" ${2:-} -s bench/wrk/invites.lua \
    "http://127.0.0.1:$PORT" -- "$WORKLOAD" "$SITE" "$AUTH" "$work/ids" distinct "$ID_BLOCK"
}

servers=(ceiling floor floor-index floor-no-checkpoint agegate)
[[ $POSTGRES == no ]] || servers=(ceiling floor floor-index agegate)
[[ $WORKLOAD == create ]] || servers=(ceiling floor agegate)
for round in $(seq "$ROUNDS"); do
  # Each round starts with the next server, so none always runs first.
  for i in "${!servers[@]}"; do
    s=${servers[$(((i + round - 1) % ${#servers[@]}))]}
    start "$s"
    if [[ $WORKLOAD == get ]]; then
      : >"$work/ids"
      preload "$PORT" 20000 "$work/ids" >/dev/null
    fi
    load 2 >/dev/null
    out=$(load "$DURATION" --latency)
    kill "$server"; wait "$server" 2>/dev/null || true; server=
    grep -q "Non-2xx\|Socket errors" <<<"$out" && { echo "floor: $s answered errors" >&2; echo "$out" >&2; exit 1; }
    echo "$round $s $(awk '/Requests\/sec/ {print $2}' <<<"$out") $(awk '$1 == "50%" || $1 == "99%" {printf "%s ", $2}' <<<"$out")" | tee -a "$work/results"
  done
done

python3 - "$work/results" "${servers[@]}" <<'PY'
import statistics, sys
def ms(v):
    return float(v[:-2]) if v.endswith("ms") else float(v[:-2]) / 1000 if v.endswith("us") else float(v[:-1]) * 1000
rounds = {}
for line in open(sys.argv[1]):
    r, server, rps, p50, p99 = line.split()
    rounds.setdefault(r, {})[server] = (float(rps), ms(p50), ms(p99))
print("\n| server | req/s | ratio to the ceiling | the rounds' ratios | p50 ms | p99 ms (median; worst) |")
print("|---|---:|---:|---|---:|---:|")
for server in sys.argv[2:]:
    runs = [rs[server] for rs in rounds.values()]
    ratios = [rs[server][0] / rs["ceiling"][0] for rs in rounds.values()]
    print(f"| {server} | {statistics.median(r[0] for r in runs):,.0f} | {statistics.median(ratios):.3f}× "
          f"| {' / '.join(f'{x:.3f}' for x in ratios)} | {statistics.median(r[1] for r in runs):.2f} "
          f"| {statistics.median(r[2] for r in runs):.2f}; {max(r[2] for r in runs):.2f} |")
PY
