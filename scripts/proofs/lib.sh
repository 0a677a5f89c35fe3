# Shared by the reliability proofs (sourced, not run): the release binary, free loopback
# ports, a throwaway PostgreSQL cluster, starting and stopping `agegate serve`, and
# cleanup of everything they started. All traffic stays on 127.0.0.1.
#
# The caller sets `set -euo pipefail`, cds to the repository root and then sources this.
# KEEP_WORK=1 keeps the temporary directory (logs, databases) for a post-mortem.

PROOF=${PROOF:-proof}
BIN=${PROOF_BIN:-target/release/agegate}  # PROOF_BIN: another build, for trying a proof out
WORK=$(mktemp -d "${TMPDIR:-/tmp}/agegate-$PROOF.XXXXXX")
PG_BIN=""
PG_PORT=""
SERVER_PID=""
SERVER_PORT=""
EXTRA_PIDS=()

say() { printf '%s: %s\n' "$PROOF" "$*" >&2; }
die() { say "$*"; exit 1; }

proof_cleanup() {
  local rc=$?
  set +e
  [[ -n $SERVER_PID ]] && kill -9 "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  for pid in "${EXTRA_PIDS[@]}"; do kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
  [[ -n $PG_BIN ]] && as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg" -m immediate stop >/dev/null 2>&1
  if [[ $rc -eq 130 || $rc -eq 143 ]]; then
    say "interrupted; stopped everything it started"
  elif [[ $rc -ne 0 && -s $WORK/server.log ]]; then
    say "failed (exit $rc); the last lines of the server log:"
    tail -n 20 "$WORK/server.log" >&2
  fi
  if [[ ${KEEP_WORK:-0} == 1 ]]; then say "kept $WORK"; else rm -rf "$WORK"; fi
  exit "$rc"
}
trap proof_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The release build of this repository; NO_BUILD=1 uses the binary already there.
build() {
  if [[ ${NO_BUILD:-0} != 1 ]]; then
    cargo build --release --quiet || die "cargo build --release failed"
  fi
  [[ -x $BIN ]] || die "$BIN is missing (cargo build --release)"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }

# A throwaway PostgreSQL cluster in $WORK/pg on a free loopback port, durable like
# production (fsync on); removed at exit. Sets DB_URL to a fresh database in it.
start_postgres() { # database name
  PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -x $PG_BIN/initdb ]] || { PG_BIN=""; die "PostgreSQL is not installed (bash scripts/setup.sh)"; }
  [[ $(id -u) -eq 0 ]] && chown postgres "$WORK"
  as_pg "$PG_BIN/initdb" -D "$WORK/pg" -U postgres --auth=trust --no-sync >/dev/null
  PG_PORT=$(free_port)
  as_pg "$PG_BIN/pg_ctl" -D "$WORK/pg" -w -t 60 -l "$WORK/pg.log" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $WORK -c fsync=on -c synchronous_commit=on -c max_connections=100" \
    start >/dev/null
  as_pg "$PG_BIN/psql" -X -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -c "CREATE DATABASE $1" >/dev/null
  DB_URL="postgres://postgres@127.0.0.1:$PG_PORT/$1"
}

# Sets DB_URL for --backend sqlite|postgres (run in this shell, not in $(...), so the
# cleanup knows about the cluster).
setup_database() { # backend
  case $1 in
    sqlite) DB_URL="sqlite:$WORK/agegate.db" ;;
    postgres) start_postgres agegate ;;
    *) die "unknown backend '$1' (sqlite or postgres)" ;;
  esac
}

# Starts `agegate serve` on SERVER_PORT (picked once, reused on restarts) and waits for
# /healthz; extra arguments go to serve. Sets SERVER_PID.
start_server() {
  [[ -n $SERVER_PORT ]] || SERVER_PORT=$(free_port)
  RUST_LOG=${RUST_LOG:-warn} "$BIN" --database-url "$DB_URL" serve \
    --listen "127.0.0.1:$SERVER_PORT" "$@" 2>>"$WORK/server.log" &
  SERVER_PID=$!
  for _ in $(seq 300); do
    curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$SERVER_PORT/healthz" && return 0
    kill -0 "$SERVER_PID" 2>/dev/null || break
    sleep 0.1
  done
  die "the server did not become healthy within 30 s"
}

# kill -9: no chance to finish anything.
kill9_server() {
  kill -9 "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
}

# SIGTERM: a graceful stop; it must exit 0 within 30 s.
term_server() {
  local rc=0
  kill -TERM "$SERVER_PID"
  for _ in $(seq 300); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$SERVER_PID" 2>/dev/null && { kill -9 "$SERVER_PID"; die "the server did not stop within 30 s of SIGTERM"; }
  wait "$SERVER_PID" || rc=$?
  SERVER_PID=""
  [[ $rc -eq 0 ]] || die "the server exited $rc after SIGTERM (expected 0)"
}

# Creates a site; sets SITE_ID, SITE_USER, SITE_PASS, SITE_SECRET.
create_site() { # extra args for `site create`
  local json
  json=$("$BIN" --database-url "$DB_URL" site create --name "$PROOF" --json "$@")
  read -r SITE_ID SITE_USER SITE_PASS SITE_SECRET < <(python3 -c '
import json, sys
s = json.loads(sys.argv[1])
print(s["siteId"], s["username"], s["password"], s["webhookSecret"])' "$json")
}

rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
