#!/usr/bin/env bash
# Create and get throughput on SQLite, on PostgreSQL with one node, and on PostgreSQL
# with two nodes, in one run, on loopback. PostgreSQL is a throwaway cluster made here
# (Debian's package; `bash scripts/setup.sh` installs it) and removed at the end.
# Bounded: each wrk run lasts DURATION seconds. Creates carry distinct customIds, scattered
# (bench/wrk/custom_id.lua), as in bench/run.sh.
#
#   bash bench/backends.sh          # DURATION=10 CONNECTIONS=64 THREADS=2
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}

command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null || { echo "bench: install wrk first" >&2; exit 1; }; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort | tail -1)
[[ -x "$pgbin/initdb" ]] || { echo "bench: PostgreSQL is not installed (bash scripts/setup.sh)" >&2; exit 1; }
cargo build --release --quiet
bin=target/release/agegate

work=$(mktemp -d)
servers=()
cleanup() {
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  as_pg "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A throwaway cluster, durable like production (fsync on).
[[ $(id -u) -eq 0 ]] && chown postgres "$work"
as_pg "$pgbin/initdb" -D "$work/pg" -U postgres --auth=trust --no-sync >/dev/null
pgport=$(free_port)
as_pg "$pgbin/pg_ctl" -D "$work/pg" -w -l "$work/pg.log" \
  -o "-c listen_addresses=127.0.0.1 -p $pgport -k $work -c fsync=on -c max_connections=200" start >/dev/null

start_node() { # database URL → pid and port in NODE_PID, NODE_PORT
  NODE_PORT=$(free_port)
  RUST_LOG=warn $bin --database-url "$1" serve --listen "127.0.0.1:$NODE_PORT" 2>>"$work/server.log" &
  NODE_PID=$!
  servers+=("$NODE_PID")
  for _ in $(seq 100); do curl -sf "http://127.0.0.1:$NODE_PORT/healthz" >/dev/null && return; sleep 0.1; done
  echo "bench: a node did not start; see its log:" >&2; cat "$work/server.log" >&2; exit 1
}

# One wrk per node, connections split between them; prints summed req/s and the worst p99.
# Every wrk thread takes a block of customIds of its own (BLOCK, counted across the run).
BLOCK=0
load() { # name lua path port...
  local name=$1 lua=$2 path=$3; shift 3
  local per=$((CONNECTIONS / $#)) outs=() pids=()
  for port in "$@"; do
    out="$work/wrk.$port.$name"; outs+=("$out")
    wrk -t"$THREADS" -c"$per" -d"${DURATION}s" --latency -s "$lua" "http://127.0.0.1:$port$path" -- "$BLOCK" >"$out" &
    BLOCK=$((BLOCK + THREADS))
    pids+=($!)
  done
  wait "${pids[@]}"
  python3 - "$name" "${outs[@]}" <<'PY'
import re, sys
name, files = sys.argv[1], sys.argv[2:]
rps = p99 = non2xx = 0.0
def ms(v, unit): return float(v) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
for f in files:
    t = open(f).read()
    rps += float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", t); p99 = max(p99, ms(*m.groups()))
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", t); non2xx += int(m.group(1)) if m else 0
print(f"  {name:7} {rps:10.0f} req/s   p99 {p99:7.2f} ms   non-2xx {int(non2xx)}")
PY
}

run() { # label database-URL nodes
  local label=$1 url=$2 nodes=$3 ports=()
  for _ in $(seq "$nodes"); do start_node "$url"; ports+=("$NODE_PORT"); done
  local site; site=$($bin --database-url "$url" site create --name bench --json)
  get() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$1'])" "$site"; }
  local site_id auth; site_id=$(get siteId); auth=$(printf '%s:%s' "$(get username)" "$(get password)" | base64 -w0)
  cat >"$work/create.lua" <<LUA
local custom_id = dofile("$PWD/bench/wrk/custom_id.lua")
local threads, body = {}
function setup(thread) thread:set("index", #threads); table.insert(threads, thread) end
function init(args) body = custom_id.bodies("distinct", tonumber(args[1]) + index) end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Basic $auth"
function request() return wrk.format(nil, nil, nil, body()) end
LUA
  printf 'wrk.headers["Authorization"] = "Basic %s"\n' "$auth" >"$work/get.lua"
  local invite; invite=$(curl -sf -X POST -H "Authorization: Basic $auth" "http://127.0.0.1:${ports[0]}/v1/website/$site_id/invite" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["inviteId"])')
  echo "== $label ($nodes node(s), ${DURATION}s, $CONNECTIONS connections)"
  load create "$work/create.lua" "/v1/website/$site_id/invite" "${ports[@]}"
  load get "$work/get.lua" "/v1/website/$site_id/invite/$invite" "${ports[@]}"
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  servers=()
}

psql -X -q "postgres://postgres@127.0.0.1:$pgport/postgres" -c "CREATE DATABASE one" -c "CREATE DATABASE two" -f bench/pg_warm.sql
run "SQLite" "sqlite:$work/bench.db" 1
run "PostgreSQL" "postgres://postgres@127.0.0.1:$pgport/one" 1
run "PostgreSQL" "postgres://postgres@127.0.0.1:$pgport/two" 2
