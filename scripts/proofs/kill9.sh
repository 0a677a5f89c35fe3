#!/usr/bin/env bash
# Proof: kill -9 during create load loses no acknowledged invite.
#
#   bash scripts/proofs/kill9.sh [ROUNDS] [--backend sqlite|postgres]     # ROUNDS=20, sqlite
#
# Each round: `agegate serve` (the release build) takes a concurrent create load
# (scripts/proofs/load.py, CONCURRENCY keep-alive clients, default 16), is killed with
# SIGKILL at a random moment 0.5–3 s into it, and is started again on the same database;
# then every invite acknowledged with a 200 in that round must be there (GET 200 with its
# customId). At the end every invite acknowledged in any round is checked once more, the
# server is stopped with SIGTERM (must exit 0), and on SQLite the file passes
# `PRAGMA integrity_check`. Exits non-zero if a single acknowledged invite is lost.
# PostgreSQL is a throwaway cluster (fsync on) removed at exit. Loopback only; bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=20
BACKEND=sqlite
while [[ $# -gt 0 ]]; do
  case $1 in
    --backend) BACKEND=${2:?--backend needs sqlite or postgres}; shift 2 ;;
    --backend=*) BACKEND=${1#*=}; shift ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) [[ $1 =~ ^[0-9]+$ && $1 -ge 1 && $1 -le 1000 ]] || { echo "kill9: ROUNDS must be 1..1000" >&2; exit 2; }
       ROUNDS=$1; shift ;;
  esac
done
CONCURRENCY=${CONCURRENCY:-16}

PROOF=kill9
source scripts/proofs/lib.sh
build
setup_database "$BACKEND"
create_site
site_args=(--site="$SITE_ID" --user="$SITE_USER" --password="$SITE_PASS")
field() { python3 -c 'import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))' "$1" "$2"; }

say "$ROUNDS rounds on $BACKEND, $CONCURRENCY clients, kill -9 at a random moment 0.5–3 s into the load"
touch "$WORK/acked.all"
acked_total=0 lost_total=0 unanswered_total=0 early=0
start_server
for round in $(seq "$ROUNDS"); do
  acked="$WORK/acked.$round"
  : >"$acked"
  # Bounded by count and time, whatever happens to the server.
  python3 scripts/proofs/load.py create --port "$SERVER_PORT" "${site_args[@]}" \
    --concurrency "$CONCURRENCY" --count 50000 --seconds 15 --stop-on-error \
    --prefix "r$round" --out "$acked" >"$WORK/load.$round.json" &
  load_pid=$!
  EXTRA_PIDS+=("$load_pid")
  delay_ms=$((500 + RANDOM % 2501))
  sleep "$((delay_ms / 1000)).$(printf '%03d' $((delay_ms % 1000)))"
  kill -0 "$load_pid" 2>/dev/null || early=$((early + 1)) # the load ended before the kill
  kill9_server
  sleep 0.2                           # each client sees its connection break and stops
  kill -TERM "$load_pid" 2>/dev/null || true
  wait "$load_pid" || die "round $round: the load generator failed"
  EXTRA_PIDS=()
  summary=$(cat "$WORK/load.$round.json")

  start_server                        # the same database, after a crash
  n=$(wc -l <"$acked")
  result=$(python3 scripts/proofs/load.py check --port "$SERVER_PORT" "${site_args[@]}" \
    --concurrency 8 --seconds 120 --in "$acked") || true
  present=$(field "$result" present)
  lost=$((n - present))
  acked_total=$((acked_total + n))
  lost_total=$((lost_total + lost))
  unanswered=$(field "$summary" errors)
  unanswered_total=$((unanswered_total + unanswered))
  cat "$acked" >>"$WORK/acked.all"
  printf 'round %3d/%d: killed at %5.2f s, acknowledged %5d, in flight at the kill %2d, present after restart %5d, lost %d\n' \
    "$round" "$ROUNDS" "$(awk "BEGIN{print $delay_ms/1000}")" "$n" "$unanswered" "$present" "$lost"
  [[ $lost -eq 0 ]] || say "round $round lost invites: $result"
done

say "checking every acknowledged invite of all $ROUNDS rounds again"
final=$(python3 scripts/proofs/load.py check --port "$SERVER_PORT" "${site_args[@]}" \
  --concurrency 8 --seconds 300 --in "$WORK/acked.all") || true
final_present=$(field "$final" present)
final_lost=$((acked_total - final_present))
term_server
integrity="n/a"
if [[ $BACKEND == sqlite ]]; then
  integrity=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])' \
    "${DB_URL#sqlite:}")
fi
[[ $final_lost -gt $lost_total ]] && lost_total=$final_lost

echo "== kill -9 proof ($BACKEND): rounds $ROUNDS, acknowledged $acked_total, lost $lost_total," \
  "present at the end $final_present/$acked_total, requests in flight at the kills (unanswered) $unanswered_total," \
  "rounds where the load ended before the kill $early, integrity_check $integrity"
[[ $lost_total -eq 0 && $acked_total -gt 0 ]] || { say "FAILED: $lost_total acknowledged invite(s) lost"; exit 1; }
[[ $integrity == ok || $integrity == n/a ]] || { say "FAILED: integrity_check says $integrity"; exit 1; }
