#!/usr/bin/env bash
# Whether reloading a large trusted list disturbs request latency. One release
# server with a 500-provider EU AV trusted list (signed by xmlsec1 as the EU signs, made by
# scripts/trustlist-fixtures.py --bench) answers wrk on two ordinary routes, the status
# GET and the gateway page GET, in rounds alternating "idle" and "reloading": SIGHUP in a
# loop, each one re-reading and re-verifying the list. Prints each run's p50/p99 and
# req/s, and per route the median ratio reloading/idle of p50, p99 and req/s.
#
#   bash bench/trust_refresh.sh
#
# Environment: ROUNDS (3), DURATION (5 s per run), PROVIDERS (500), CONNECTIONS (8),
# INTERVAL (0.05 s between SIGHUPs), SERVER_CPU (0), LOAD_CPU (1),
# BIN (target/release/agegate, built when missing), KEEP=1 keeps the work dir.
# Bounded: ROUNDS × 2 routes × 2 runs of DURATION seconds; loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-5} PROVIDERS=${PROVIDERS:-500}
CONNECTIONS=${CONNECTIONS:-8} INTERVAL=${INTERVAL:-0.05}
SERVER_CPU=${SERVER_CPU:-0} LOAD_CPU=${LOAD_CPU:-1}
for n in "$ROUNDS" "$DURATION" "$PROVIDERS" "$CONNECTIONS"; do
  [[ $n =~ ^[0-9]+$ ]] && ((n >= 1)) || { echo "trust_refresh: counts must be whole numbers ≥ 1" >&2; exit 2; }
done
((DURATION <= 600 && ROUNDS <= 50)) || { echo "trust_refresh: DURATION ≤ 600, ROUNDS ≤ 50" >&2; exit 2; }
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "trust_refresh: wrk is missing (apt-get install wrk)" >&2; exit 1; }
command -v xmlsec1 >/dev/null || { echo "trust_refresh: xmlsec1 is missing (bash scripts/setup.sh)" >&2; exit 1; }
# The venv scripts/setup.sh makes (signxml, cryptography): named after its requirements.
venv="${XDG_CACHE_HOME:-$HOME/.cache}/agegate-schemathesis-$(sha256sum scripts/schemathesis-requirements.txt | cut -c1-16)"
[[ -x $venv/bin/python ]] || { echo "trust_refresh: no $venv (bash scripts/setup.sh)" >&2; exit 1; }
BIN=${BIN:-$PWD/target/release/agegate}
if [[ ! -x $BIN ]]; then
  echo "trust_refresh: building the release binary" >&2
  cargo build --release --quiet --locked --bin agegate
fi
pin_server=() pin_load=()
if (($(nproc) > 1)); then
  pin_server=(taskset -c "$SERVER_CPU") pin_load=(taskset -c "$LOAD_CPU")
fi

work=$(mktemp -d "${BENCH_DIR:-$PWD/target}/bench.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [[ ${KEEP:-0} == 1 ]]; then echo "trust_refresh: kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
source bench/lib.sh

echo "trust_refresh: signing a list of $PROVIDERS providers with xmlsec1"
"$venv/bin/python" scripts/trustlist-fixtures.py --bench "$PROVIDERS" "$work/tl"
db="sqlite://$work/agegate.db"
port=$(free_port)
RUST_LOG=info "${pin_server[@]}" "$BIN" --database-url "$db" serve --listen "127.0.0.1:$port" \
  --public-url "http://127.0.0.1:$port" \
  --eu-av-trusted-list "$work/tl/list-$PROVIDERS.xml" --eu-av-trusted-list-signer "$work/tl/signer-ca.pem" \
  2>>"$work/server.log" &
server=$!; pids+=("$server")
wait_up "$port"
grep -q "eu-av: on, $PROVIDERS trust anchor" "$work/server.log" \
  || grep -q "credential kind eu-av: on, $PROVIDERS trust anchor" "$work/server.log" \
  || { echo "trust_refresh: the server did not take the list's $PROVIDERS anchors; see $work/server.log" >&2; KEEP=1; exit 1; }
new_site "$BIN" "$db"
# Pending invites: the gateway page of each shows the wallet link and the QR code.
for _ in $(seq 200); do
  curl -sf -X POST -H "Authorization: Basic $AUTH" -H 'Content-Type: application/json' -d '{}' \
    "http://127.0.0.1:$port/v1/website/$SITE/invite" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inviteId"])'
done >"$work/ids"

reloads() { grep -c "SIGHUP: trust anchors reloaded" "$work/server.log" || true; }
run() { # route state round → one line in $work/results
  local prefix auth=() hup=
  if [[ $1 == status ]]; then prefix="/v1/website/$SITE/invite/" auth=("$AUTH"); else prefix=/gateway/; fi
  local before; before=$(reloads)
  if [[ $2 == reloading ]]; then
    (while kill -0 "$server" 2>/dev/null; do kill -HUP "$server"; sleep "$INTERVAL"; done) &
    hup=$!
  fi
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -s bench/wrk/paths.lua \
    "http://127.0.0.1:$port" -- "$prefix" "$work/ids" "${auth[@]}" >"$work/wrk.out"
  if [[ -n $hup ]]; then kill "$hup"; wait "$hup" 2>/dev/null || true; fi
  sleep 0.5 # the last reload's log line
  local r; r=$(awk '/^result/ {print $2, $3, $4, $5, $6}' "$work/wrk.out")
  [[ -n $r ]] || { echo "trust_refresh: wrk gave no result; see $work" >&2; KEEP=1; exit 1; }
  set -- "$1" "$2" "$3" $r "$(($(reloads) - before))"
  (($7 == 0)) || { echo "trust_refresh: $7 failed requests on $1; see $work" >&2; KEEP=1; exit 1; }
  printf '%s %s %s %s %s %.0f %s\n' "$1" "$2" "$3" "$4" "$5" "$(echo "$6 / $8" | bc -l)" "$9" >>"$work/results"
  printf '   %-8s %-10s round %s: p50 %6.2f ms, p99 %6.2f ms, %6.0f req/s, %s reloads\n' \
    "$1" "$2" "$3" "$(echo "$4 / 1000" | bc -l)" "$(echo "$5 / 1000" | bc -l)" "$(echo "$6 / $8" | bc -l)" "$9"
}

echo "trust_refresh: server on CPU $SERVER_CPU, wrk on CPU $LOAD_CPU, $CONNECTIONS connections," \
  "$ROUNDS rounds of ${DURATION}s, a SIGHUP every ${INTERVAL}s while reloading"
for round in $(seq "$ROUNDS"); do
  # Alternate which state goes first, so neither always meets a warmer machine.
  if ((round % 2)); then order=(idle reloading); else order=(reloading idle); fi
  for route in status gateway; do
    for state in "${order[@]}"; do run "$route" "$state" "$round"; done
  done
done
python3 - "$work/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
for route in ("status", "gateway"):
    def runs(state):
        return {r[2]: r for r in rows if r[0] == route and r[1] == state}
    idle, busy = runs("idle"), runs("reloading")
    ratios = [[float(busy[k][i]) / float(idle[k][i]) for k in idle] for i in (3, 4, 5)]
    loads = statistics.mean(int(busy[k][6]) for k in busy)
    print(f"{route}: reloading/idle p50 {statistics.median(ratios[0]):.2f}x, "
          f"p99 {statistics.median(ratios[1]):.2f}x, req/s {statistics.median(ratios[2]):.2f}x "
          f"(median of {len(idle)} rounds; {loads:.0f} reloads per run)")
EOF
