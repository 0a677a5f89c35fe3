#!/usr/bin/env bash
# Paired A/B of two builds of agegate: whether a change is faster. Both servers run at
# once, each on a database of its own with the same number of invites preloaded, pinned
# to the same core; wrk (on the other core) alternates between them, pair after pair, A
# first in odd pairs and B first in even ones. A pair's ratio is B's req/s over A's, run
# seconds apart: this VM's speed drifts by a third within minutes, and only ratios taken
# that close together are worth comparing. Prints each pair and the median, min and max.
#
#   bash bench/ab.sh HEAD~1 HEAD                     # git revisions (built into target/ab)
#   bash bench/ab.sh /tmp/old-agegate target/release/agegate --workload create
#   bash bench/ab.sh HEAD HEAD --pairs 10            # A/A: how far apart equal builds land
#   bash bench/ab.sh HEAD~1 HEAD --postgres --workload get   # on PostgreSQL (one cluster,
#                                                    # a database per build, on SERVER_CPU)
#
# Options: --workload create|get|mixed|create-no-id|create-same-id (mixed; creates carry
# distinct customIds, scattered, as in bench/run.sh), --pairs N (8), --duration S (4),
# --preload N (20000), --reads N (GETs read N ids drawn afresh at random from those
# stored before every run, as bench/run.sh does; default: all of them), --postgres.
# Environment:
# CONNECTIONS (64), SERVER_CPU (0), LOAD_CPU (1). Before every run the database file is
# read once, as bench/run.sh does (this VM pages out file pages left unread for 60 s).
# Bounded: PAIRS × 2 wrk runs of DURATION seconds, after the preloads.
set -euo pipefail
cd "$(dirname "$0")/.."

WORKLOAD=mixed PAIRS=8 DURATION=4 PRELOAD=20000 READS=0 BACKEND=sqlite builds=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --workload) WORKLOAD=$2; shift 2 ;;
    --pairs) PAIRS=$2; shift 2 ;;
    --duration) DURATION=$2; shift 2 ;;
    --preload) PRELOAD=$2; shift 2 ;;
    --reads) READS=$2; shift 2 ;;
    --postgres) BACKEND=postgres; shift ;;
    -h | --help) sed -n '2,22p' "$0"; exit 0 ;;
    -*) echo "ab: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) builds+=("$1"); shift ;;
  esac
done
((${#builds[@]} == 2)) || { echo "ab: give two builds, A and B (see --help)" >&2; exit 2; }
[[ $WORKLOAD =~ ^(create|get|mixed|create-no-id|create-same-id)$ ]] \
  || { echo "ab: --workload is create, get, mixed, create-no-id or create-same-id" >&2; exit 2; }
mode=$WORKLOAD custom_ids=distinct
case $WORKLOAD in
  create-no-id) mode=create custom_ids=none ;;
  create-same-id) mode=create custom_ids=same ;;
esac
for n in "$PAIRS" "$DURATION" "$PRELOAD" "$READS"; do
  [[ $n =~ ^[0-9]+$ ]] || { echo "ab: counts must be whole numbers" >&2; exit 2; }
done
((PAIRS >= 1 && DURATION >= 1 && DURATION <= 600 && PRELOAD >= 1)) \
  || { echo "ab: need --pairs ≥ 1, --duration 1..600, --preload ≥ 1" >&2; exit 2; }
CONNECTIONS=${CONNECTIONS:-64}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "ab: wrk is missing (apt-get install wrk)" >&2; exit 1; }

# A path to a binary is used as it is; anything else is a git revision, built once in a
# throwaway worktree (into target/ab/build: dependencies compile once, later revisions
# only agegate) and kept in target/ab.
binary() {
  if [[ -f $1 && -x $1 ]]; then realpath "$1"; return; fi
  local sha out tree
  sha=$(git rev-parse --verify --quiet "$1^{commit}") || { echo "ab: $1 is neither a binary nor a revision" >&2; exit 2; }
  out=$PWD/target/ab/agegate-${sha:0:12}
  if [[ ! -x $out ]]; then
    tree=$(mktemp -d "${TMPDIR:-/tmp}/agegate-ab.XXXXXX")
    git worktree add -q --detach "$tree" "$sha"
    echo "ab: building $1 (${sha:0:12})" >&2
    (cd "$tree" && CARGO_TARGET_DIR=$OLDPWD/target/ab/build cargo build --release --quiet --locked --bin agegate) \
      || { git worktree remove --force "$tree"; exit 1; }
    mkdir -p "$(dirname "$out")"
    cp target/ab/build/release/agegate "$out"
    git worktree remove --force "$tree"
  fi
  echo "$out"
}
bin_a=$(binary "${builds[0]}")
bin_b=$(binary "${builds[1]}")

work=$(mktemp -d "$PWD/target/ab.XXXXXX")
servers=()
trap 'kill "${servers[@]}" 2>/dev/null || true; wait 2>/dev/null || true; stop_pg 2>/dev/null || true; [[ ${KEEP:-0} == 1 ]] && echo "kept $work" || rm -rf "$work"' EXIT
pin_load=(taskset -c "$LOAD_CPU")
source bench/lib.sh
if [[ $BACKEND == postgres ]]; then
  [[ -x $(pg_bin)/initdb ]] || { echo "ab: no PostgreSQL (bash scripts/setup.sh)" >&2; exit 1; }
  pin_pg=(taskset -c "$SERVER_CPU")
  start_pg a b
fi

declare -A port site auth
for side in a b; do
  bin=bin_$side
  mkdir "$work/$side"
  url=sqlite:$work/$side/db
  [[ $BACKEND == postgres ]] && url=postgres://postgres@127.0.0.1:$PG_PORT/$side
  port[$side]=$(free_port)
  RUST_LOG=warn taskset -c "$SERVER_CPU" "${!bin}" --database-url "$url" \
    serve --listen "127.0.0.1:${port[$side]}" 2>"$work/$side/log" &
  servers+=($!)
  wait_up "${port[$side]}"
  new_site "${!bin}" "$url"
  site[$side]=$SITE auth[$side]=$AUTH
  preload "${port[$side]}" "$PRELOAD" "$work/$side/ids"
done

one() { # side → "req/s p99"
  local ids=$work/$1/ids
  if ((READS > 0)); then shuf -n "$READS" "$ids" >"$work/ids.run"; ids=$work/ids.run; fi
  [[ -f $work/$1/db ]] && cat "$work/$1/db" >/dev/null
  sleep 0.3
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s bench/wrk/invites.lua \
    "http://127.0.0.1:${port[$1]}" -- "$mode" "${site[$1]}" "${auth[$1]}" "$ids" "$custom_ids" "$ID_BLOCK" >"$work/wrk"
  if grep -q "Non-2xx" "$work/wrk"; then echo "ab: non-2xx answers from $1" >&2; cat "$work/wrk" >&2; exit 1; fi
  echo "$(awk '/Requests\/sec/ {print $2}' "$work/wrk") $(awk '$1 == "99%" {print $2}' "$work/wrk")"
}

echo "A: ${builds[0]}  B: ${builds[1]}  ($BACKEND, $WORKLOAD, $PAIRS pairs of ${DURATION}s, $PRELOAD invites each)"
for i in $(seq "$PAIRS"); do
  # A pair's two runs send the same customIds, each to a database of its own.
  next_block
  if ((i % 2)); then a=$(one a); b=$(one b); else b=$(one b); a=$(one a); fi
  read -r ra pa <<<"$a"; read -r rb pb <<<"$b"
  printf 'pair %2d  A %9.0f req/s p99 %-8s B %9.0f req/s p99 %-8s B/A %.3f\n' \
    "$i" "$ra" "$pa" "$rb" "$pb" "$(python3 -c "print($rb / $ra)")"
done | tee "$work/pairs"
python3 - "$work/pairs" <<'PY'
import statistics, sys
r = [float(line.split()[-1]) for line in open(sys.argv[1])]
print(f"B/A median {statistics.median(r):.3f}  min {min(r):.3f}  max {max(r):.3f}  "
      f"({sum(x > 1 for x in r)} of {len(r)} pairs faster)")
PY
