#!/usr/bin/env bash
# Proof: webhook delivery through receiver outages and server restarts loses no event.
#
#   bash scripts/proofs/webhooks.sh [EVENTS] [--backend sqlite|postgres]   # EVENTS=300, sqlite
#
# A receiver (scripts/proofs/receiver.py) checks every signature and records each
# webhook-id it accepts. EVENTS invites are created and then verified through the
# verifier API in 12 batches, two rounds of six disruptions:
#   1 SIGTERM the server mid-batch       2 receiver down (connection refused) for 3 s
#   3 receiver answers 500 for 3 s       4 receiver down, then SIGTERM the server with
#                                          deliveries pending; receiver up, restart
#   5 SIGKILL the server mid-batch       6 receiver down, SIGKILL the server, restart,
#                                          receiver back answering 500 for 2 s, then ok
# The server runs with --webhook-retry-schedule 1s,1s,2s,2s,5s,5s,10s and a 11 s lease.
# At the end every verified invite's event must have been accepted at least once (lost =
# 0, else exit 1), every event in the server's outbox must be delivered, and no
# signature may fail. Duplicates are counted and reported with the disruption they
# followed: 0 is expected except after a SIGKILL that lands between an answered attempt
# and its record. Loopback only; every wait is bounded.
set -euo pipefail
cd "$(dirname "$0")/../.."

EVENTS=300
BACKEND=sqlite
while [[ $# -gt 0 ]]; do
  case $1 in
    --backend) BACKEND=${2:?--backend needs sqlite or postgres}; shift 2 ;;
    --backend=*) BACKEND=${1#*=}; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) [[ $1 =~ ^[0-9]+$ && $1 -ge 12 && $1 -le 100000 ]] || { echo "webhooks: EVENTS must be 12..100000" >&2; exit 2; }
       EVENTS=$1; shift ;;
  esac
done

PROOF=webhooks
source scripts/proofs/lib.sh
build
setup_database "$BACKEND"

TOKEN=proof-verifier-token-$RANDOM$RANDOM
SCHEDULE=1s,1s,2s,2s,5s,5s,10s
LEASE_SECONDS=11
HOOK_PORT=$(free_port)
CONTROL_PORT=$(free_port)
create_site --webhook-url "http://127.0.0.1:$HOOK_PORT/hook"
site_args=(--site="$SITE_ID" --user="$SITE_USER" --password="$SITE_PASS")

WEBHOOK_SECRET=$SITE_SECRET python3 scripts/proofs/receiver.py --port "$HOOK_PORT" \
  --control-port "$CONTROL_PORT" --log "$WORK/received" --max-seconds 1800 2>>"$WORK/receiver.log" &
RECEIVER_PID=$!
EXTRA_PIDS=("$RECEIVER_PID")
receiver() { curl -sf --max-time 10 -X "${2:-POST}" "http://127.0.0.1:$CONTROL_PORT/$1"; }
for _ in $(seq 100); do receiver stats GET >/dev/null 2>&1 && break; sleep 0.1; done
receiver stats GET >/dev/null || die "the receiver did not start"

serve() {
  start_server --verifier-token "$TOKEN" --allow-private-webhooks \
    --webhook-retry-schedule "$SCHEDULE" --webhook-lease "${LEASE_SECONDS}s"
}
phase() { printf '%s %s\n' "$(date +%s.%N)" "$1" >>"$WORK/phases"; say "$1"; }

serve
say "creating $EVENTS invites on $BACKEND"
python3 scripts/proofs/load.py create --port "$SERVER_PORT" "${site_args[@]}" --concurrency 8 \
  --count "$EVENTS" --seconds 120 --prefix hook --out "$WORK/invites" >/dev/null
[[ $(wc -l <"$WORK/invites") -eq $EVENTS ]] || die "could not create $EVENTS invites"
split -n "l/12" -d -a 2 "$WORK/invites" "$WORK/batch."
: >"$WORK/verified"
# Each batch is spread over about 2 s, so a disruption lands among verifications and
# deliveries.
PAUSE=$(awk -v n="$EVENTS" 'BEGIN { printf "%.3f", 2.0 * 2 / (n / 12) }')

# Verifies one batch in the background (retrying through restarts); sets VERIFY_PID.
verify_start() { # batch number
  python3 scripts/proofs/load.py verify --port "$SERVER_PORT" --token "$TOKEN" --concurrency 2 \
    --pause "$PAUSE" --seconds 120 --in "$(printf '%s/batch.%02d' "$WORK" "$1")" --out "$WORK/verified" \
    >>"$WORK/verify.log" &
  VERIFY_PID=$!
  EXTRA_PIDS+=("$VERIFY_PID")
}
verify_wait() {
  wait "$VERIFY_PID" || die "the verify driver failed"
  EXTRA_PIDS=("$RECEIVER_PID")
}
# A random pause of 0.2–1.8 s: the disruption lands somewhere mid-batch.
random_pause() { local ms=$((200 + RANDOM % 1601)); sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"; }

# Waits (at most $1 seconds) until every invite verified so far has had its event accepted.
# The phases are spaced by this, so no event meets so many outages in a row that its
# whole 26-second retry schedule runs out (it would then be marked failed, by design).
drain() {
  local want got
  want=$(awk '{print $1}' "$WORK/verified" | sort -u)
  for _ in $(seq "$1"); do
    got=$(awk '{print $4}' "$WORK/received" 2>/dev/null | sort -u | comm -12 - <(echo "$want") | wc -l)
    [[ $got -ge $(echo "$want" | grep -c .) ]] && return 0
    sleep 1
  done
  say "not every event arrived within $1 s"
}
next_batch() { verify_wait; batch=$((batch + 1)); drain 60; }

batch=0 sigterms=0 sigkills=0
for cycle in 1 2; do
  phase "cycle $cycle: 1 SIGTERM mid-batch"
  verify_start $batch; random_pause
  term_server; sigterms=$((sigterms + 1)); serve
  next_batch

  phase "cycle $cycle: 2 receiver down for 3 s"
  receiver stop >/dev/null; verify_start $batch
  sleep 3; receiver start >/dev/null
  next_batch

  phase "cycle $cycle: 3 receiver answers 500 for 3 s"
  receiver mode/500 >/dev/null; verify_start $batch
  sleep 3; receiver mode/ok >/dev/null
  next_batch

  phase "cycle $cycle: 4 receiver down, SIGTERM with deliveries pending"
  receiver stop >/dev/null; verify_start $batch; verify_wait; sleep 1
  term_server; sigterms=$((sigterms + 1)); receiver start >/dev/null; serve
  batch=$((batch + 1)); drain 60

  phase "cycle $cycle: 5 SIGKILL mid-batch"
  verify_start $batch; random_pause
  kill9_server; sigkills=$((sigkills + 1)); sleep 0.5; serve
  next_batch

  phase "cycle $cycle: 6 receiver down, SIGKILL, receiver back answering 500"
  receiver stop >/dev/null; verify_start $batch; random_pause
  kill9_server; sigkills=$((sigkills + 1)); serve
  receiver mode/500 >/dev/null; receiver start >/dev/null; sleep 2; receiver mode/ok >/dev/null
  next_batch
done
phase "settling: waiting for every event (bounded)"

drain 180
# Late duplicates (a killed server's leased events) would come within a lease: wait one.
sleep $((LEASE_SECONDS + 3))
"$BIN" --database-url "$DB_URL" site deliveries "$SITE_ID" --json --limit 1000000 >"$WORK/outbox.json"
term_server
receiver_stats=$(receiver stats GET)

python3 - "$WORK" "$receiver_stats" "$EVENTS" "$BACKEND" "$sigterms" "$sigkills" <<'PY'
import json, sys
work, stats, events, backend = sys.argv[1], json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
sigterms, sigkills = sys.argv[5], sys.argv[6]
verified = {line.split()[0] for line in open(f"{work}/verified") if line.strip()}
received = [line.split() for line in open(f"{work}/received") if line.strip()]
phases = [(float(t), name) for t, name in (line.rstrip("\n").split(" ", 1) for line in open(f"{work}/phases"))]
outbox = json.load(open(f"{work}/outbox.json"))

def phase_at(t):
    name = "before the first phase"
    for start, n in phases:
        if start <= t:
            name = n
    return name

first, count = {}, {}
invite_of = {}
for t, msg_id, typ, invite_id, status in received:
    count[msg_id] = count.get(msg_id, 0) + 1
    first.setdefault(msg_id, float(t))
    invite_of[msg_id] = (typ, invite_id, status)
events_by_invite = {}
for msg_id, (typ, invite_id, status) in invite_of.items():
    events_by_invite.setdefault(invite_id, []).append(msg_id)
lost = sorted(verified - set(events_by_invite))
wrong = [m for m, (typ, inv, st) in invite_of.items() if typ != "invite.verified" or st != "verified" or inv not in verified]
several = [inv for inv, ids in events_by_invite.items() if len(ids) > 1]
dups = {m: c - 1 for m, c in count.items() if c > 1}
dup_phase = {}
for m, extra in dups.items():
    p = phase_at(first[m])
    dup_phase[p] = dup_phase.get(p, 0) + extra
states = {}
for e in outbox:
    states[e["state"]] = states.get(e["state"], 0) + 1
outbox_ids = {e["eventId"] for e in outbox}
not_received = sorted(outbox_ids - set(count))
attempts = sum(len(e["attempts"]) for e in outbox)

print(f"== webhook proof ({backend}): invites verified {len(verified)}/{events}, events accepted "
      f"{len(count)} unique, lost {len(lost)}, duplicates {sum(dups.values())}, "
      f"wrong or extra events {len(wrong) + len(several)}, bad signatures {stats['rejected']}")
print(f"   disruptions: {sigterms} SIGTERM and {sigkills} SIGKILL restarts, 6 receiver outages, "
      f"4 periods of 500s")
print(f"   receiver: {stats['accepted']} deliveries accepted, {stats['answered_500']} answered 500 on purpose; "
      f"server outbox: {len(outbox)} events {states}, {attempts} attempts recorded, "
      f"{len(not_received)} never received")
for p, n in sorted(dup_phase.items()):
    print(f"   duplicates first delivered during '{p}': {n}")
ok = (len(verified) == events and not lost and not wrong and not several and stats["rejected"] == 0
      and not not_received and set(states) <= {"delivered"})
if not ok:
    print(f"webhooks: FAILED; lost {lost[:5]}, wrong {wrong[:5]}, several {several[:5]}, "
          f"not received {not_received[:5]}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
