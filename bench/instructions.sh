#!/usr/bin/env bash
# Instructions per request, counted by valgrind (callgrind): the one measure on this VM
# that its drifting speed does not move, for changes too small for paired wall-clock
# runs (bench/ab.sh) to resolve. One server, one kept-alive connection: CREATES creates,
# then GETS status reads; the same without the reads is subtracted, so the figure is what
# a read adds. Printed twice: in all, and without the store's read (the status cache and
# SQLite), whose share depends on timing: valgrind runs the server ~50× slower, so the
# cache's 2-ms freshness runs out between most reads and they go to SQLite, which they
# rarely do at full speed. Valgrind counts no kernel time and hides SHA-NI (the Basic
# check's SHA-256 runs in software here). Bounded: two runs per build, about 10 s each.
#
#   bash bench/instructions.sh                         # target/release/agegate (built)
#   bash bench/instructions.sh /tmp/old-agegate target/release/agegate   # before, after
#   GETS=8000 bash bench/instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CREATES=${CREATES:-200}
GETS=${GETS:-4000}
command -v valgrind >/dev/null || apt-get install -y -qq valgrind >/dev/null 2>&1 \
  || { echo "instructions: valgrind is missing (apt-get install valgrind)" >&2; exit 1; }
bins=("$@")
if ((${#bins[@]} == 0)); then
  cargo build --release --quiet --bin agegate
  bins=("$PWD/target/release/agegate")
fi
work=$(mktemp -d "$PWD/target/instructions.XXXXXX")
trap 'kill "${server:-}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
source bench/lib.sh

run() { # binary gets → callgrind's output file
  local out="$work/cg.$RANDOM" db="sqlite:$work/db.$RANDOM" port
  port=$(free_port)
  new_site "$1" "$db"
  RUST_LOG=warn valgrind --tool=callgrind --callgrind-out-file="$out" \
    "$1" --database-url "$db" serve --listen "127.0.0.1:$port" 2>>"$work/valgrind.log" &
  server=$!
  for _ in $(seq 600); do curl -sf "http://127.0.0.1:$port/healthz" >/dev/null && break; sleep 0.1; done
  python3 bench/instructions.py "$port" "$SITE" "$AUTH" "$CREATES" "$2"
  kill -TERM "$server"; wait "$server" || true
  echo "$out"
}
total() { grep -E '^(summary|totals):' "$1" | tail -1 | awk '{print $2}'; }
store() { # inclusive instructions of the store's read of an invite (0 if never called)
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
    | awk '/SqliteStore>::invite::\{\{closure\}\} \[/ && !n++ {gsub(",", "", $1); v = $1}
           END {print v + 0}'
}

for bin in "${bins[@]}"; do
  base=$(run "$bin" 0) reads=$(run "$bin" "$GETS")
  all=$(( ($(total "$reads") - $(total "$base")) / GETS ))
  rest=$(( all - ($(store "$reads") - $(store "$base")) / GETS ))
  echo "$bin: $all instructions per status read, $rest without the store's read"
done
