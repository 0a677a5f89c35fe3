#!/usr/bin/env bash
# Load test of the release binary on loopback: create and get throughput, latency, and
# the server's peak memory. Bounded: each wrk run lasts DURATION seconds, then stops.
#
#   bash bench/bench.sh            # DURATION=10 CONNECTIONS=64 THREADS=2
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
PORT=${PORT:-18080}

command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null || { echo "bench: install wrk first" >&2; exit 1; }; }
cargo build --release --quiet

work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
export AGEGATE_DATABASE_URL="sqlite:$work/bench.db"
bin=target/release/agegate

site=$($bin site create --name bench --json)
get() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$1'])" "$site"; }
site_id=$(get siteId); auth=$(printf '%s:%s' "$(get username)" "$(get password)" | base64 -w0)

RUST_LOG=warn $bin serve --listen "127.0.0.1:$PORT" 2>"$work/server.log" &
server=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

base="http://127.0.0.1:$PORT/v1/website/$site_id/invite"
cat > "$work/create.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"customId":"bench-user"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Basic $auth"
LUA
invite=$(curl -sf -X POST -H "Authorization: Basic $auth" "$base" | python3 -c 'import json,sys; print(json.load(sys.stdin)["inviteId"])')
cat > "$work/get.lua" <<LUA
wrk.headers["Authorization"] = "Basic $auth"
LUA

echo "== create: POST /v1/website/{siteId}/invite (${DURATION}s, $CONNECTIONS connections)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/create.lua" "$base" | grep -E "Requests/sec|Latency|50%|99%|Non-2xx|Socket errors"
echo "== get: GET /v1/website/{siteId}/invite/{inviteId} (${DURATION}s, $CONNECTIONS connections)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/get.lua" "$base/$invite" | grep -E "Requests/sec|Latency|50%|99%|Non-2xx|Socket errors"

echo "== server peak memory (VmHWM): $(grep VmHWM /proc/$server/status | awk '{print $2, $3}')"
echo "== invites stored: $(python3 -c "import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute('select count(*) from invites').fetchone()[0])" "$work/bench.db")"
