#!/usr/bin/env bash
# The benchmark: agegate (release build, durable commits) against the ceiling — a server
# on the same stack with the same routes, Basic check and JSON that stores nothing
# (examples/ceiling.rs) — in alternating rounds of the same run, on loopback. Servers
# run on one core, wrk on the other (taskset). Prints req/s, p50/p99, non-2xx and peak
# RSS per workload, the ratios to the ceiling, and whether each target of BENCHMARKS.md
# holds. Bounded: every wrk run lasts DURATION seconds; preloads stop at their count.
#
# Creates carry distinct customIds in scattered order (bench/wrk/custom_id.lua), as sites
# send their user ids; the variants create-no-id and create-same-id run beside them.
#
#   bash bench/run.sh                        # SQLite at 20 k, then at 1 M (get, get-newest, create); PostgreSQL
#   bash bench/run.sh --preload 50000        # stored invites before the first phase
#   bash bench/run.sh --growth 0 --no-postgres --rounds 1 --duration 5   # quick look
#   bash bench/run.sh --no-sqlite            # PostgreSQL only
#
# Environment: CONNECTIONS (64), SERVER_CPU (0), LOAD_CPU (1), PG_CPU (PostgreSQL's CPUs;
# default SERVER_CPU: the service is agegate and its database), KEEP=1 keeps the work dir,
# SETTLE (15: seconds the disk is left to settle before the first phase).
set -euo pipefail
cd "$(dirname "$0")/.."

PRELOAD=20000 GROWTH=1000000 DURATION=10 ROUNDS=3 POSTGRES=auto SQLITE=yes
while [[ $# -gt 0 ]]; do
  case $1 in
    --preload) PRELOAD=$2; shift 2 ;;
    --growth) GROWTH=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --no-postgres) POSTGRES=no; shift ;;
    --no-sqlite) SQLITE=no; shift ;;
    -h | --help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
SETTLE=${SETTLE:-15}
for n in "$PRELOAD" "$GROWTH" "$DURATION" "$ROUNDS" "$SETTLE"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "bench: counts must be whole numbers" >&2; exit 2; }
done
((PRELOAD >= 1 && DURATION >= 1 && DURATION <= 600 && ROUNDS >= 1 && GROWTH <= 10000000)) \
  || { echo "bench: need --preload ≥ 1, --duration 1..600, --rounds ≥ 1, --growth ≤ 10 M" >&2; exit 2; }
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}

command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "bench: wrk is missing (apt-get install wrk)" >&2; exit 1; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [[ $POSTGRES == auto ]]; then
  if [[ -x $pgbin/initdb ]]; then POSTGRES=yes; else POSTGRES=no; echo "bench: no PostgreSQL (bash scripts/setup.sh); skipping it" >&2; fi
fi
pin_server=() pin_load=()
if [[ $(nproc) -ge 2 ]]; then
  pin_server=(taskset -c "$SERVER_CPU") pin_load=(taskset -c "$LOAD_CPU")
else
  echo "bench: one CPU only; server and load generator share it" >&2
fi

cargo build --release --quiet --bin agegate --example ceiling
bin=$PWD/target/release/agegate
ceiling=$PWD/target/release/examples/ceiling
# Let the disk settle: on a file system mounted with `discard` (as on this VM) the
# blocks of files deleted just before (the last run's work directory: a million-invite
# database, PostgreSQL's WAL) are discarded, and commits in the next seconds stall behind
# that (create p99 16–18 ms against 4 ms; none after 15 s, BENCHMARKS.md).
sync
sleep "$SETTLE"

# On disk, not tmpfs: commits must pay for their fsync as in production.
work=$(mktemp -d "${BENCH_DIR:-$PWD/target}/bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  stop_pg
  if [[ ${KEEP:-0} == 1 ]]; then echo "bench: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
source bench/lib.sh

start_agegate() { # label database-url → AG_PID AG_PORT SITE AUTH, and a ceiling with the same site: CE_PID CE_PORT
  AG_PORT=$(free_port)
  RUST_LOG=warn "${pin_server[@]}" "$bin" --database-url "$2" serve --listen "127.0.0.1:$AG_PORT" \
    --public-url http://127.0.0.1 2>>"$work/$1.log" &
  AG_PID=$!; pids+=("$AG_PID")
  wait_up "$AG_PORT"
  new_site "$bin" "$2"
  CE_PORT=$(free_port)
  "${pin_server[@]}" "$ceiling" "127.0.0.1:$CE_PORT" "$SITE" "$USERNAME" "$PASSWORD" \
    2>>"$work/ceiling.log" &
  CE_PID=$!; pids+=("$CE_PID")
  wait_up "$CE_PORT"
}

measure() { # phase workload server port ids-file round
  local out="$work/out/$1.$2.$3.$6" ids=$5 mode=$2 custom_ids=distinct
  # Creates carry distinct customIds, scattered, as sites send their user ids; the
  # variants send none (`{}`) or the same one every time.
  case $2 in
    create-no-id) mode=create custom_ids=none ;;
    create-same-id) mode=create custom_ids=same ;;
    create | mixed) [[ $3 == agegate ]] && next_block ;;
  esac
  # Every run reads PRELOAD ids drawn afresh from all stored: the load generator's cost
  # per request depends on how many distinct ids it sends (bench/wrk/invites.lua), so it
  # is the same in every phase, while the rows they hit spread over the whole table.
  # `get-newest` reads the PRELOAD newest instead (ids sort by creation time): the
  # invites a site polls while its visitors verify, as many rows as the first phase
  # reads, in a table of any size.
  if [[ $2 == get-newest ]]; then
    mode=get; LC_ALL=C sort "$5" | tail -n "$PRELOAD" >"$work/ids.run"; ids=$work/ids.run
  elif (($(wc -l <"$5") > PRELOAD)); then
    shuf -n "$PRELOAD" "$5" >"$work/ids.run"; ids=$work/ids.run
  fi
  # The database file into the OS page cache, where a server with memory to spare keeps
  # it: this VM pages out file pages unread for a minute (a DAMON `pageout` scheme, see
  # BENCHMARKS.md), and a lookup that then reads the disk stalls the runtime thread.
  if [[ $3 == agegate && -n $DB_FILE ]]; then cat "$DB_FILE"* >/dev/null; fi
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/wrk/invites.lua \
    "http://127.0.0.1:$4" -- "$mode" "$SITE" "$AUTH" "$ids" "$custom_ids" "$ID_BLOCK" >"$out"
  awk '/Requests\/sec/ {printf "      %-8s %-8s %s req/s\n", w, s, $2}' w="$2" s="$3" "$out"
}

phase() { # name ids-file workload...
  local name=$1 ids=$2; shift 2
  echo "== $name: $(wc -l <"$ids") invites stored before it; ${ROUNDS} rounds of ${DURATION}s, $CONNECTIONS connections"
  for round in $(seq "$ROUNDS"); do
    echo "   round $round"
    for workload in "$@"; do
      # Alternate which server goes first, so neither always meets a warmer machine.
      if ((round % 2)); then order=(ceiling agegate); else order=(agegate ceiling); fi
      for server in "${order[@]}"; do
        if [[ $server == ceiling ]]; then port=$CE_PORT; else port=$AG_PORT; fi
        measure "$name" "$workload" "$server" "$port" "$ids" "$round"
      done
    done
  done
  grep VmHWM "/proc/$AG_PID/status" | awk '{print $2}' >"$work/out/$name.rss"
}

stop_servers() { kill "$AG_PID" "$CE_PID"; wait "$AG_PID" "$CE_PID" 2>/dev/null || true; pids=(); }

mkdir -p "$work/out"
DB_FILE=
echo "bench: $(nproc) CPUs; servers on CPU ${SERVER_CPU}, wrk on CPU ${LOAD_CPU}; work dir $work"

# SQLite: at PRELOAD stored invites, then grown to GROWTH.
if [[ $SQLITE == yes ]]; then
  start_agegate sqlite "sqlite:$work/agegate.db"
  DB_FILE=$work/agegate.db
  preload "$AG_PORT" "$PRELOAD" "$work/ids.sqlite"
  phase sqlite "$work/ids.sqlite" get mixed create create-no-id create-same-id
  if ((GROWTH > PRELOAD)); then
    preload "$AG_PORT" $((GROWTH - PRELOAD)) "$work/ids.sqlite"
    phase sqlite-grown "$work/ids.sqlite" get get-newest create
  fi
  stop_servers
  DB_FILE=
fi

if [[ $POSTGRES == yes ]]; then
  pin_pg=()
  [[ ${#pin_server[@]} -gt 0 ]] && pin_pg=(taskset -c "${PG_CPU:-$SERVER_CPU}")
  start_pg bench
  start_agegate postgres "postgres://postgres@127.0.0.1:$PG_PORT/bench"
  preload "$AG_PORT" "$PRELOAD" "$work/ids.postgres"
  phase postgres "$work/ids.postgres" get create create-no-id create-same-id
  stop_servers
fi

python3 bench/report.py "$work/out" "$CONNECTIONS"
