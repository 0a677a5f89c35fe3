# Shared by bench/run.sh and bench/profile.sh (sourced). Expects `work` (a temp dir),
# CONNECTIONS and `pin_load` (the taskset prefix for wrk, possibly empty).

# Every wrk run that creates takes the next block of distinct customIds
# (bench/wrk/custom_id.lua), so no two creates of one benchmark send the same one.
ID_BLOCK=0
next_block() { ID_BLOCK=$((ID_BLOCK + 1)); ((ID_BLOCK < 128)) || { echo "bench: out of customId blocks" >&2; exit 1; }; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

wait_up() { # port
  for _ in $(seq 200); do curl -sf "http://127.0.0.1:$1/healthz" >/dev/null && return; sleep 0.05; done
  echo "bench: a server on port $1 did not start; logs in $work" >&2; KEEP=1; exit 1
}

field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"; }

new_site() { # binary database-url → SITE, USERNAME, PASSWORD, AUTH (Basic, base64)
  local site; site=$("$1" --database-url "$2" site create --name bench --json)
  SITE=$(field "$site" siteId) USERNAME=$(field "$site" username) PASSWORD=$(field "$site" password)
  AUTH=$(printf '%s:%s' "$USERNAME" "$PASSWORD" | base64 -w0)
}

preload() { # port count ids-file: stores `count` invites through the API, each with a
  # customId of its own, and appends their ids
  (($2 > 0)) || return 0
  next_block
  local threads t0=$SECONDS wrk_pid
  ((threads = $2 < 2 ? 1 : 2))
  rm -f "$3.new".*
  # wrk runs for its whole duration even when every thread has stopped, so it is
  # stopped from here once the threads have written their quotas.
  "${pin_load[@]}" wrk -t"$threads" -c"$CONNECTIONS" -d3600s -s bench/wrk/preload.lua "http://127.0.0.1:$1" \
    -- "$SITE" "$AUTH" $(($2 / threads)) "$3.new" distinct "$ID_BLOCK" >"$work/preload.out" &
  wrk_pid=$!
  while kill -0 "$wrk_pid" 2>/dev/null && (($(cat "$3.new".* 2>/dev/null | wc -l) < $2 / threads * threads)); do
    sleep 0.5
  done
  kill -INT "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" || true
  cat "$3.new".* >>"$3"; rm -f "$3.new".*
  echo "   preloaded $(($2 / threads * threads)) invites in $((SECONDS - t0)) s ($(wc -l <"$3") ids known)"
}

# A throwaway PostgreSQL cluster in `$work/pg` (fsync on), brought to the state of one in
# service (bench/pg_warm.sql), with the databases named; pinned to the CPUs of `pin_pg`
# (a taskset prefix, possibly empty). Sets PG_PORT; `stop_pg` stops it.
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true; }
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
start_pg() { # database...
  local bin db creates=()
  bin=$(pg_bin)
  [[ $(id -u) -eq 0 ]] && chown postgres "$work"
  as_pg "$bin/initdb" -D "$work/pg" -U postgres --auth=trust --no-sync >/dev/null
  PG_PORT=$(free_port)
  as_pg "${pin_pg[@]}" "$bin/pg_ctl" -D "$work/pg" -w -l "$work/pg.log" \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $work -c fsync=on -c synchronous_commit=on -c max_connections=100" \
    start >/dev/null
  for db in "$@"; do creates+=(-c "CREATE DATABASE $db"); done
  psql -X -q "postgres://postgres@127.0.0.1:$PG_PORT/postgres" "${creates[@]}" -f bench/pg_warm.sql
}
stop_pg() { [[ -d $work/pg ]] && as_pg "$(pg_bin)/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true; }
