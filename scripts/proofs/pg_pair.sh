# A PostgreSQL primary and its standby on loopback, for the failover proof (sourced after
# lib.sh, not run). Two data directories, $WORK/pg0 and $WORK/pg1, on the ports
# PG_PORTS[0] and PG_PORTS[1]; PRIMARY is the index of the one that takes writes. The
# standby is made with `pg_basebackup -R` and streams from the primary; with "sync" the
# primary waits for it on every commit (synchronous_standby_names = 'standby',
# synchronous_commit = on), with "async" it does not.

PAIR_BIN=""
PG_PORTS=()
PRIMARY=0

pg_opts() { # port
  echo "-c listen_addresses=127.0.0.1 -p $1 -k $WORK -c fsync=on -c synchronous_commit=on" \
    "-c wal_level=replica -c max_wal_senders=10 -c hot_standby=on -c max_connections=100" \
    "-c wal_retrieve_retry_interval=1s -c wal_receiver_timeout=5s -c wal_sender_timeout=5s"
}

pg_start() { # index
  as_pg "$PAIR_BIN/pg_ctl" -D "$WORK/pg$1" -w -t 60 -l "$WORK/pg$1.log" \
    -o "$(pg_opts "${PG_PORTS[$1]}")" start >/dev/null
}

pg_sql() { # index, SQL: one value
  as_pg "$PAIR_BIN/psql" -X -q -At -h 127.0.0.1 -p "${PG_PORTS[$1]}" -U postgres -d postgres -c "$2"
}

# Makes directory $1 a standby of the primary and starts it; then waits until the primary
# sees it streaming (and, for sync, as its synchronous standby).
pg_standby_from_primary() { # index, mode
  local s=$1
  rm -rf "$WORK/pg$s"
  as_pg "$PAIR_BIN/pg_basebackup" -h 127.0.0.1 -p "${PG_PORTS[$PRIMARY]}" -U postgres \
    -D "$WORK/pg$s" -R -X stream --no-sync --checkpoint=fast >/dev/null
  # The copy must not wait for a standby of its own once promoted: it would block every
  # commit until one attaches. Its walreceiver names itself, so the primary can wait for it.
  sed -i '/synchronous_standby_names/d' "$WORK/pg$s/postgresql.auto.conf"
  echo "primary_conninfo = 'host=127.0.0.1 port=${PG_PORTS[$PRIMARY]} user=postgres application_name=standby'" \
    >>"$WORK/pg$s/postgresql.auto.conf"
  pg_start "$s"
  local names="''"
  [[ $2 == sync ]] && names="'standby'"
  pg_sql "$PRIMARY" "ALTER SYSTEM SET synchronous_standby_names = $names" >/dev/null
  pg_sql "$PRIMARY" "SELECT pg_reload_conf()" >/dev/null
  local want=async
  [[ $2 == sync ]] && want=sync
  for _ in $(seq 300); do
    [[ $(pg_sql "$PRIMARY" "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby' AND state = 'streaming'") == "$want" ]] && return 0
    sleep 0.1
  done
  die "the standby on ${PG_PORTS[$s]} is not a $want standby within 30 s"
}

pg_pair_start() { # mode
  PAIR_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [[ -x $PAIR_BIN/initdb && -x $PAIR_BIN/pg_basebackup ]] || { PAIR_BIN=""; die "PostgreSQL is not installed (bash scripts/setup.sh)"; }
  [[ $(id -u) -eq 0 ]] && chown postgres "$WORK"
  PG_PORTS=("$(free_port)" "$(free_port)")
  PRIMARY=0
  as_pg "$PAIR_BIN/initdb" -D "$WORK/pg0" -U postgres --auth=trust --no-sync >/dev/null
  pg_start 0
  pg_sql 0 "CREATE DATABASE agegate" >/dev/null
  pg_standby_from_primary 1 "$1"
}

# SIGKILL to the primary's postmaster and every process it started, at once: the
# machine is gone, nothing is flushed or said goodbye.
pg_pair_kill_primary() {
  local pm
  pm=$(head -1 "$WORK/pg$PRIMARY/postmaster.pid")
  # shellcheck disable=SC2046
  kill -9 "$pm" $(ps -o pid= --ppid "$pm") 2>/dev/null || true
}

pg_pair_promote() {
  local standby=$((1 - PRIMARY))
  as_pg "$PAIR_BIN/pg_ctl" -D "$WORK/pg$standby" -w -t 60 promote >/dev/null
  PRIMARY=$standby
}

# The dead primary's place becomes a standby of the promoted one, on the same port.
pg_pair_rebuild_standby() { # mode
  local old=$((1 - PRIMARY)) pm
  pm=$(head -1 "$WORK/pg$old/postmaster.pid" 2>/dev/null || true)
  for _ in $(seq 100); do [[ -n $pm ]] && kill -0 "$pm" 2>/dev/null && sleep 0.1 || break; done
  rm -f "$WORK/pg$old/postmaster.pid"
  pg_standby_from_primary "$old" "$1"
}

pg_pair_stop_all() {
  [[ -n $PAIR_BIN ]] || return 0
  for i in 0 1; do
    [[ -f $WORK/pg$i/postmaster.pid ]] &&
      as_pg "$PAIR_BIN/pg_ctl" -D "$WORK/pg$i" -m immediate -w -t 30 stop >/dev/null 2>&1
  done
  true
}
