#!/usr/bin/env bash
# Instructions per status read, counted by valgrind (callgrind): the one measure on this
# VM that its drifting speed does not move, for changes too small for paired wall-clock
# runs (bench/ab.sh) to resolve. One server, one kept-alive connection: CREATES creates,
# then GETS status reads; the same without the reads is subtracted, so the figures are
# what a read adds. The first is the connection's task (hyper, the router, the handler)
# without the store's read (the status cache and SQLite): within about 5 % run to run,
# moving a little with how many reads went to SQLite. The others move more with timing
# and are printed for scale only: the store's read (valgrind runs the server ~50×
# slower, so the cache's 2-ms freshness runs out between most reads and they go to
# SQLite, which they rarely do at full speed) and the whole process (the runtime's
# parking and the background threads too). Valgrind counts no kernel time and hides
# SHA-NI (the Basic check's SHA-256 runs in software here).
# Bounded: two runs per build, about 10 s each.
#
# WORKLOAD=create counts creates instead (each with a customId of its own, one at a time,
# so one job per group commit): a run with CREATES creates minus one with MORE creates
# more, per create. The figure it judges by is the SQLite writer thread's (its batches:
# the jobs, the customId upkeep and the tallies, the commit), which only the count of
# creates moves; the connection's task and the whole process are printed beside it.
# Valgrind counts no kernel time: the fsync a create waits for is not in any figure.
#
#   bash bench/instructions.sh                         # target/release/agegate (built)
#   bash bench/instructions.sh /tmp/old-agegate target/release/agegate   # before, after
#   GETS=8000 bash bench/instructions.sh
#   WORKLOAD=create MORE=3000 bash bench/instructions.sh A B
set -euo pipefail
cd "$(dirname "$0")/.."
CREATES=${CREATES:-200}
GETS=${GETS:-4000}
WORKLOAD=${WORKLOAD:-get}
MORE=${MORE:-2000}
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null 2>&1 \
  || { echo "instructions: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
bins=("$@")
if ((${#bins[@]} == 0)); then
  cargo build --release --quiet --bin agegate
  bins=("$PWD/target/release/agegate")
fi
work=$(mktemp -d "$PWD/target/instructions.XXXXXX")
trap 'rm -rf "$work"' EXIT
source bench/lib.sh

run() { # binary gets [creates] → callgrind's output file; stops its server whatever happens
  local out="$work/cg.$RANDOM" db="sqlite:$work/db.$RANDOM" port server
  port=$(free_port)
  new_site "$1" "$db"
  RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$1" --database-url "$db" serve --listen "127.0.0.1:$port" \
    --public-url http://127.0.0.1 2>>"$work/valgrind.log" &
  server=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  local ok=0
  python3 bench/instructions.py "$port" "$SITE" "$AUTH" "${3:-$CREATES}" "$2" >&2 || ok=$?
  kill -TERM "$server"; wait "$server" || true
  ((ok == 0)) || { echo "instructions: the client failed; the server's log:" >&2; tail -5 "$work/valgrind.log" >&2; exit 1; }
  echo "$out"
}
total() { grep -E '^(summary|totals):' "$1" | tail -1 | awk '{print $2}'; }
inclusive() { # file function: the instructions of the function and what it calls (0 if never called)
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
    | awk -v f="$2 [" 'index($0, f) && !n++ {gsub(",", "", $1); v = $1} END {print v + 0}'
}
TASK='agegate::server::serve_each::{{closure}}::{{closure}}'
STORE='agegate::store::sqlite::capabilities::<impl agegate::store::InviteStore for agegate::store::sqlite::SqliteStore>::invite::{{closure}}'

per() { echo $(( ($1 - $2) / GETS )); } # with reads, without → per read
WRITER='agegate::store::sqlite::pool::write_loop'
per_create() { echo $(( ($1 - $2) / MORE )); }

if [[ $WORKLOAD == create ]]; then
  for bin in "${bins[@]}"; do
    base=$(run "$bin" 0) more=$(run "$bin" 0 $((CREATES + MORE)))
    writer=$(per_create "$(inclusive "$more" "$WRITER")" "$(inclusive "$base" "$WRITER")")
    task=$(per_create "$(inclusive "$more" "$TASK")" "$(inclusive "$base" "$TASK")")
    all=$(per_create "$(total "$more")" "$(total "$base")")
    echo "$bin: $writer instructions per create on the SQLite writer thread (the connection's task $task, the whole process $all)"
  done
  exit 0
fi

for bin in "${bins[@]}"; do
  base=$(run "$bin" 0) reads=$(run "$bin" "$GETS")
  task=$(per "$(inclusive "$reads" "$TASK")" "$(inclusive "$base" "$TASK")")
  store=$(per "$(inclusive "$reads" "$STORE")" "$(inclusive "$base" "$STORE")")
  all=$(per "$(total "$reads")" "$(total "$base")")
  echo "$bin: $((task - store)) instructions per status read in the connection's task without the store's read (the store's read $store, the whole process $all)"
done
