#!/usr/bin/env bash
# Proof: a PostgreSQL failover (kill -9 of the primary, promotion of its standby) loses
# nothing agegate acknowledged and serves no stale status.
#
#   bash scripts/proofs/failover.sh [ROUNDS] [--promote-delay SECONDS] [--async]   # ROUNDS=5
#
# Two clusters of Debian's PostgreSQL on loopback: a primary and a standby made with
# `pg_basebackup -R`, synchronous (synchronous_standby_names, synchronous_commit=on), or
# asynchronous with --async. Two `agegate serve` nodes (the release build) use
# postgres://postgres@127.0.0.1:P1,127.0.0.1:P2/agegate?target_session_attrs=read-write
# and deliver webhooks to scripts/proofs/receiver.py. Each round: a mixed load
# (failover.py: creates on one node, verifications through the verifier API and cancels on
# the other, status reads on both, /healthz polled on both); 2 s in, every process of the
# primary gets SIGKILL; after --promote-delay seconds (default 0) the standby is promoted
# (`pg_ctl promote`); the load goes on 2.5 s; then every invite acknowledged in the round
# is read on both nodes, those changed in the last second before the kill first (and all
# rounds' once more at the end). The dead
# primary is rebuilt as the new standby (pg_basebackup from the promoted one) for the next
# round. At the end (failover.py report) it fails on: an acknowledged create or state
# change missing, a status read that started after a change was acknowledged and shows
# the state before it, a webhook event of an acknowledged change never delivered, any
# 500, broken exchange or request over 5 s, or a /healthz 503 outside the outage (after
# the kill, until 1 s after that node's first write succeeded again). With --async the
# losses are reported, not failed on. Loopback only; bounded; everything it started is
# stopped and removed at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."

ROUNDS=5
DELAY=0
MODE=sync
while [[ $# -gt 0 ]]; do
  case $1 in
    --promote-delay) DELAY=${2:?--promote-delay needs seconds}; shift 2 ;;
    --async) MODE=async; shift ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) [[ $1 =~ ^[0-9]+$ && $1 -ge 1 && $1 -le 100 ]] || { echo "failover: ROUNDS must be 1..100" >&2; exit 2; }
       ROUNDS=$1; shift ;;
  esac
done
[[ $DELAY =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "failover: --promote-delay takes seconds" >&2; exit 2; }

PROOF=failover
source scripts/proofs/lib.sh
source scripts/proofs/pg_pair.sh
build

TOKEN=proof-verifier-token-$RANDOM$RANDOM
HOOK_PORT=$(free_port)
CONTROL_PORT=$(free_port)
NODE_PORTS=("$(free_port)" "$(free_port)")
NODE_PIDS=()
stop_nodes() { for pid in "${NODE_PIDS[@]}"; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done; true; }
cleanup_pair() {
  local rc=$?
  set +e
  stop_nodes
  pg_pair_stop_all
  if [[ $rc -ne 0 && $rc -ne 130 && $rc -ne 143 ]]; then
    for log in "$WORK"/node*.log; do [[ -s $log ]] && { say "last lines of $log:"; tail -n 10 "$log" >&2; }; done
  fi
  return "$rc"
}
trap 'cleanup_pair; proof_cleanup' EXIT

pg_pair_start "$MODE"
DB_URL="postgres://postgres@127.0.0.1:${PG_PORTS[0]},127.0.0.1:${PG_PORTS[1]}/agegate?target_session_attrs=read-write"
create_site --webhook-url "http://127.0.0.1:$HOOK_PORT/hook"
site_args=(--site="$SITE_ID" --user="$SITE_USER" --password="$SITE_PASS")

WEBHOOK_SECRET=$SITE_SECRET python3 scripts/proofs/receiver.py --port "$HOOK_PORT" \
  --control-port "$CONTROL_PORT" --log "$WORK/received" --max-seconds 1800 2>>"$WORK/receiver.log" &
EXTRA_PIDS+=("$!")
touch "$WORK/received"

for i in 0 1; do
  RUST_LOG=${RUST_LOG:-warn} "$BIN" --database-url "$DB_URL" serve --listen "127.0.0.1:${NODE_PORTS[$i]}" \
    --verifier-token "$TOKEN" --allow-private-webhooks --webhook-retry-schedule 1s,1s,2s,2s,5s,5s,10s \
    --webhook-lease 11s 2>>"$WORK/node$i.log" &
  NODE_PIDS+=("$!")
done
for port in "${NODE_PORTS[@]}"; do
  for _ in $(seq 300); do curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/healthz" && break; sleep 0.1; done
  curl -sf -o /dev/null --max-time 1 "http://127.0.0.1:$port/healthz" || die "node on $port did not become healthy"
done
NODES="${NODE_PORTS[0]},${NODE_PORTS[1]}"
mkdir -p "$WORK/run"
now() { date +%s.%N; }

say "$ROUNDS rounds, $MODE replication, promotion ${DELAY} s after the kill; nodes on $NODES, PostgreSQL on ${PG_PORTS[*]}"
for round in $(seq "$ROUNDS"); do
  python3 scripts/proofs/failover.py load --nodes "$NODES" "${site_args[@]}" --token "$TOKEN" \
    --dir "$WORK/run" --prefix "r$round" --seconds 30 &
  load_pid=$!
  EXTRA_PIDS+=("$load_pid")
  sleep 2
  echo "$round killing $(now)" >>"$WORK/timeline"
  pg_pair_kill_primary
  killed_at=$(now)                    # after the SIGKILLs: no commit can succeed from here on
  echo "$round kill $killed_at" >>"$WORK/timeline"
  sleep "$DELAY"
  pg_pair_promote
  promoted_at=$(now)
  echo "$round promoted $promoted_at" >>"$WORK/timeline"
  sleep 2.5
  kill -TERM "$load_pid"; wait "$load_pid" || die "round $round: the load failed"
  unset 'EXTRA_PIDS[-1]'
  since=$(awk -v k="$killed_at" 'BEGIN { printf "%.3f", k - 1 }')
  python3 scripts/proofs/failover.py check --nodes "$NODES" "${site_args[@]}" --dir "$WORK/run" \
    --prefix "r$round" --since "$since" --seconds 60
  say "round $round: primary killed, standby promoted $(awk -v a="$killed_at" -v b="$promoted_at" 'BEGIN { printf "%.2f", b - a }') s later; rebuilding a standby"
  pg_pair_rebuild_standby "$MODE"
done

# Every acknowledged change's event, within a bounded wait (a retry schedule of 26 s).
want=$(awk '$1 != "create" {print $3}' "$WORK"/run/acks.* | sort -u)
for _ in $(seq 60); do
  got=$(awk '{print $4}' "$WORK/received" | sort -u | comm -12 - <(echo "$want") | wc -l)
  [[ $got -ge $(echo "$want" | grep -c .) ]] && break
  sleep 1
done

say "reading every invite of every round again, on both nodes"
python3 scripts/proofs/failover.py check --nodes "$NODES" "${site_args[@]}" --dir "$WORK/run" --seconds 120
report=(--dir "$WORK/run" --timeline "$WORK/timeline" --received "$WORK/received")
[[ $MODE == sync ]] && report+=(--assert-zero-loss)
awk -v d="$DELAY" 'BEGIN { exit !(d >= 1) }' && report+=(--expect-503)
result=$(python3 scripts/proofs/failover.py report "${report[@]}") || { echo "$result"; die "FAILED"; }
python3 - "$result" "$MODE" "$DELAY" <<'PY'
import json, sys
r, mode, delay = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3]
rec = r["recovery_seconds"]
after = [v["after_promotion"] for v in rec.values()]
outage = [v["outage"] for v in rec.values()]
print(f"== failover proof ({mode}, promotion {delay} s after the kill): rounds {r['rounds']}, "
      f"acknowledged {r['acknowledged_creates']} creates and {r['acknowledged_changes']} changes, "
      f"lost {r['lost_creates']} creates and {r['lost_changes']} changes, stale reads {r['stale_reads']} of {r['reads']}")
print(f"   webhooks: {r['events_expected']} events of acknowledged changes, {r['events_lost']} never delivered, "
      f"{r['duplicate_deliveries']} duplicate deliveries; 500s {r['http_500']}, broken exchanges {r['broken_exchanges']}, "
      f"over 5 s {r['slow_over_5s']}")
print(f"   503s: {r['api_503']} API answers ({r['api_503_with_retry_after']} with Retry-After), /healthz {r['healthz_503']} ({r['healthz_503_with_retry_after']} with Retry-After), "
      f"{r['healthz_503_outside_outage']} outside the outage")
if after:
    print(f"   writes again {min(after):.2f}–{max(after):.2f} s after the promotion; outage (kill to first write) "
          f"{min(outage):.2f}–{max(outage):.2f} s")
PY
