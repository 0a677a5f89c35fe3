#!/usr/bin/env python3
"""Load and checks for the failover proof (failover.sh); standard library only, loopback only.

  failover.py load --nodes PA,PB --site ID --user U --password PW --token T --dir D
                   --prefix P --seconds S [--writers 6]
      Until S seconds pass or SIGTERM: writer threads create invites on one node and
      then verify (verifier API) or cancel about half of them on the other node; reader
      threads read recent invites on both nodes; one thread per node polls /healthz.
      Every answer is recorded in D (one line each, wall-clock times):
        acks.P        create|verified|expired <t_ack> <inviteId> <customId>
        reads.P       <t_start> <t_end> <node> <inviteId> <status>
        health.P      <t_start> <t_end> <node> <http status> <Retry-After or ->
        requests.P    <t_start> <seconds> <node> <route> <status or 'error'> <Retry-After or ->
  failover.py check --nodes PA,PB --site ... --dir D --since T [--seconds S]
      Reads, on both nodes, every invite acknowledged in D (--prefix P: in round P only),
      those changed after T (the last moments before the kill) first: each read is
      recorded in reads.check; the report takes the last read of each invite on each node.
  failover.py report --dir D --timeline FILE [--assert-zero-loss]
      Prints one JSON object: acknowledged writes, lost, stale reads, 500s, slow
      requests, /healthz 503s outside the outage, recovery time, per round.
"""
import argparse
import glob
import json
import os
import random
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import Client, basic  # noqa: E402  (the proofs' shared keep-alive client)

import http.client  # noqa: E402

STOP = threading.Event()
SLOW_SECONDS = 5.0


class Recorder:
    """Appends lines to one file per kind, flushed at once (a line is a fact)."""

    def __init__(self, directory, suffix):
        self.lock = threading.Lock()
        self.files = {}
        self.directory, self.suffix = directory, suffix

    def write(self, kind, *fields):
        line = " ".join(str(f) for f in fields) + "\n"
        with self.lock:
            f = self.files.get(kind)
            if f is None:
                f = self.files[kind] = open(f"{self.directory}/{kind}.{self.suffix}", "a")
            f.write(line)
            f.flush()


def timed(rec, client, node, route, method, path, body=None):
    """(status, body) or (None, b'') on a broken exchange; every request is recorded."""
    t0 = time.time()
    try:
        status, data = client.request(method, path, body)
    except (OSError, http.client.HTTPException):
        status, data = None, b""
    retry = (client.retry_after or "-") if status else "-"
    rec.write("requests", f"{t0:.3f}", f"{time.time() - t0:.3f}", node, route, status or "error", retry)
    return status, data


def cmd_load(a):
    rec = Recorder(a.dir, a.prefix)
    nodes = [int(p) for p in a.nodes.split(",")]
    auth = basic(a.user, a.password)
    bearer = {"Authorization": f"Bearer {a.token}", "Content-Type": "application/json"}
    recent, lock, counter = [], threading.Lock(), [0]
    deadline = time.time() + a.seconds
    site_path = f"/v1/website/{a.site}/invite"

    def change(client, node, invite_id, custom_id, kind):
        """Verify or cancel until acknowledged (a 503 is not an answer) or the run ends."""
        if kind == "verified":
            path, body = f"/v1/verifier/invite/{invite_id}", json.dumps({"outcome": "verified"}).encode()
        else:
            path, body = f"{site_path}/{invite_id}/cancel", None
        while not STOP.is_set() and time.time() < deadline:
            status, data = timed(rec, client, node, kind, "POST", path, body)
            if status == 200:
                if json.loads(data)["status"] == kind:
                    rec.write("acks", kind, f"{time.time():.3f}", invite_id, custom_id)
                return
            if status not in (None, 503):
                return  # 409 and the like: reported by the requests' statuses
            STOP.wait(0.05)

    def writer(w):
        creators = {n: Client(n, auth) for n in nodes}
        verifiers = {n: Client(n, bearer) for n in nodes}
        while not STOP.is_set() and time.time() < deadline:
            node = nodes[w % 2] if random.random() < 0.5 else nodes[(w + 1) % 2]
            other = nodes[1] if node == nodes[0] else nodes[0]
            with lock:
                counter[0] += 1
                custom_id = f"{a.prefix}-{w}-{counter[0]}"
            body = json.dumps({"customId": custom_id}).encode()
            status, data = timed(rec, creators[node], node, "create", "POST", site_path, body)
            if status != 200:
                STOP.wait(0.05 if status in (None, 503) else 0)
                continue
            invite_id = json.loads(data)["inviteId"]
            rec.write("acks", "create", f"{time.time():.3f}", invite_id, custom_id)
            with lock:
                recent.append(invite_id)
                del recent[:-300]
            # Let a reader put it in the other node's cache first, then change it there.
            STOP.wait(random.uniform(0, 0.05))
            roll = random.random()
            if roll < 0.3:
                change(verifiers[other], other, invite_id, custom_id, "verified")
            elif roll < 0.55:
                change(creators[other], other, invite_id, custom_id, "expired")

    def reader():
        clients = {n: Client(n, auth) for n in nodes}
        while not STOP.is_set() and time.time() < deadline:
            with lock:
                picks = random.sample(recent, min(4, len(recent)))
            for invite_id in picks:
                for n in nodes:
                    t0 = time.time()
                    status, data = timed(rec, clients[n], n, "read", "GET", f"{site_path}/{invite_id}")
                    if status == 200:
                        state = json.loads(data)[0]["status"]
                        rec.write("reads", f"{t0:.3f}", f"{time.time():.3f}", n, invite_id, state)
            STOP.wait(0.01 if picks else 0.05)

    def health(node):
        while not STOP.is_set() and time.time() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", node, timeout=10)
            t0 = time.time()
            try:
                conn.request("GET", "/healthz")
                resp = conn.getresponse()
                resp.read()
                status, retry = resp.status, resp.getheader("Retry-After") or "-"
            except (OSError, http.client.HTTPException):
                status, retry = "error", "-"
            finally:
                conn.close()
            rec.write("health", f"{t0:.3f}", f"{time.time():.3f}", node, status, retry)
            STOP.wait(0.05)

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(a.writers)]
    threads += [threading.Thread(target=reader, daemon=True) for _ in range(2)]
    threads += [threading.Thread(target=health, args=(n,), daemon=True) for n in nodes]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.2)


def read_lines(pattern):
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            for line in f:
                if line.strip():
                    yield line.split()


def cmd_check(a):
    """Reads every acknowledged invite on both nodes, the last changed before `since` first."""
    rec = Recorder(a.dir, "check")
    nodes = [int(p) for p in a.nodes.split(",")]
    acks = list(read_lines(f"{a.dir}/acks.{a.prefix or '*'}"))
    first = [x for x in acks if x[0] != "create" and float(x[1]) >= a.since]
    queue = [x[2] for x in first] + [x[2] for x in acks]
    seen, todo = set(), []
    for invite_id in queue:
        if invite_id not in seen:
            seen.add(invite_id)
            todo.append(invite_id)
    lock, deadline = threading.Lock(), time.time() + a.seconds
    auth = basic(a.user, a.password)

    def worker():
        clients = {n: Client(n, auth) for n in nodes}
        while time.time() < deadline:
            with lock:
                if not todo:
                    return
                invite_id = todo.pop(0)
            for n in nodes:
                while time.time() < deadline:
                    t0 = time.time()
                    status, data = timed(rec, clients[n], n, "check", "GET",
                                         f"/v1/website/{a.site}/invite/{invite_id}")
                    if status == 200:
                        state = json.loads(data)[0]["status"]
                        rec.write("reads", f"{t0:.3f}", f"{time.time():.3f}", n, invite_id, state)
                        break
                    if status == 404:
                        rec.write("reads", f"{t0:.3f}", f"{time.time():.3f}", n, invite_id, "missing")
                        break
                    time.sleep(0.05)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def cmd_report(a):
    acks = list(read_lines(f"{a.dir}/acks.*"))
    created = {x[2]: float(x[1]) for x in acks if x[0] == "create"}
    changed = {x[2]: (x[0], float(x[1])) for x in acks if x[0] != "create"}
    timeline = [(int(r), ev, float(t)) for r, ev, t in read_lines(a.timeline)]
    kills = sorted((t, r) for r, ev, t in timeline if ev == "kill")
    promoted = {r: t for r, ev, t in timeline if ev == "promoted"}

    killing = sorted((t, r) for r, ev, t in timeline if ev == "killing")

    def round_of(t, starts=kills):
        current = None
        for k, r in starts:
            if k <= t:
                current = r
        return current

    # Lost: the final check (both nodes) does not show an acknowledged create or change.
    final = {}
    for t0, _t1, node, invite_id, state in read_lines(f"{a.dir}/reads.check"):
        final[(invite_id, node)] = state
    nodes = sorted({node for (_i, node) in final})
    lost_creates = [i for i in created if any(final.get((i, n), "unchecked") in ("missing", "unchecked") for n in nodes)]
    lost_changes = [i for i, (kind, _t) in changed.items()
                    if i not in lost_creates and any(final.get((i, n)) != kind for n in nodes)]
    # Stale: a read that started after a change was acknowledged and shows the state before it.
    stale, stale_after_kill = [], 0
    for t0, _t1, node, invite_id, state in read_lines(f"{a.dir}/reads.*"):
        kind_t = changed.get(invite_id)
        if kind_t and float(t0) > kind_t[1] and state != kind_t[0] and state != "missing":
            stale.append((invite_id, node, state, kind_t[0]))
            stale_after_kill += round_of(float(t0)) is not None and float(t0) > kind_t[1]
    requests = list(read_lines(f"{a.dir}/requests.*"))
    statuses = {}
    for _t, _d, _n, route, status, _r in requests:
        statuses[f"{route}-{status}"] = statuses.get(f"{route}-{status}", 0) + 1
    errors_500 = sum(1 for r in requests if r[4].startswith("5") and r[4] != "503")
    broken = sum(1 for r in requests if r[4] == "error")
    slow = sum(1 for r in requests if float(r[1]) > SLOW_SECONDS)
    api_503 = sum(1 for r in requests if r[4] == "503")
    api_503_retry_after = sum(1 for r in requests if r[4] == "503" and r[5] != "-")
    # Recovery: per round and node, the answer to the first write started after the kill that
    # succeeded.
    recovered = {}
    for t, d, node, route, status, _r in sorted(requests, key=lambda x: float(x[0])):
        r = round_of(float(t))
        if route in ("create", "verified", "expired") and status == "200" and r is not None:
            recovered.setdefault((r, node), float(t) + float(d))
    health_bad, health_503, health_retry_after = [], 0, 0
    for t0, t1, node, status, retry in read_lines(f"{a.dir}/health.*"):
        if status != "503":
            continue
        health_503 += 1
        health_retry_after += retry != "-"
        # Answered before any kill, or asked well after this node's writes succeeded again.
        r = round_of(float(t1), killing)
        if r is None or float(t0) > recovered.get((r, node), float("inf")) + a.grace:
            health_bad.append((t0, node, r))
    recovery = {}
    for k, r in kills:
        firsts = [t for (rr, _n), t in recovered.items() if rr == r]
        if firsts and r in promoted:
            recovery[r] = dict(outage=round(min(firsts) - k, 2), after_promotion=round(min(firsts) - promoted[r], 2),
                               both_nodes_after_promotion=round(max(firsts) - promoted[r], 2))
    received = list(read_lines(a.received)) if os.path.exists(a.received) else []
    got = {(x[3], x[2]) for x in received}
    want = {(i, "invite.verified" if kind == "verified" else "invite.expired") for i, (kind, _t) in changed.items()
            if i not in lost_creates and i not in lost_changes}
    events_lost = sorted(want - got)
    ids = [x[1] for x in received]
    result = dict(
        rounds=len(kills), acknowledged_creates=len(created), acknowledged_changes=len(changed),
        lost_creates=len(lost_creates), lost_changes=len(lost_changes), stale_reads=len(stale),
        reads=sum(1 for _ in read_lines(f"{a.dir}/reads.*")), http_500=errors_500, broken_exchanges=broken,
        slow_over_5s=slow, api_503=api_503, api_503_with_retry_after=api_503_retry_after, healthz_503=health_503, healthz_503_with_retry_after=health_retry_after,
        healthz_503_outside_outage=len(health_bad), events_expected=len(want), events_lost=len(events_lost),
        webhook_deliveries=len(ids), duplicate_deliveries=len(ids) - len(set(ids)), recovery_seconds=recovery,
        statuses=statuses, examples=dict(lost_creates=lost_creates[:3], lost_changes=lost_changes[:3],
                                         stale=stale[:3], events_lost=events_lost[:3], healthz=health_bad[:3]))
    print(json.dumps(result))
    failed = []
    if a.assert_zero_loss and (lost_creates or lost_changes or stale):
        failed.append("acknowledged writes lost or stale reads")
    if errors_500 or broken or slow:
        failed.append("a 500, a broken exchange or a request over 5 s")
    if health_bad:
        failed.append("/healthz 503 while writes succeed")
    if a.assert_zero_loss and events_lost:
        failed.append("webhook events not delivered")
    if api_503 != api_503_retry_after or health_503 != health_retry_after:
        failed.append("a 503 without Retry-After")
    if a.expect_503 and not (health_503 and api_503):
        failed.append("no 503 seen during the delayed promotion")
    if failed:
        print("failover: FAILED: " + "; ".join(failed), file=sys.stderr)
        sys.exit(1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("load", "check"):
        sp = sub.add_parser(name)
        sp.add_argument("--nodes", required=True)
        sp.add_argument("--site", required=True)
        sp.add_argument("--user", required=True)
        sp.add_argument("--password", required=True)
        sp.add_argument("--dir", required=True)
        sp.add_argument("--seconds", type=float, default=30)
    load = sub.choices["load"]
    load.add_argument("--token", required=True)
    load.add_argument("--prefix", required=True)
    load.add_argument("--writers", type=int, default=6)
    sub.choices["check"].add_argument("--since", type=float, default=0)
    sub.choices["check"].add_argument("--prefix", help="only this round's invites (default: all)")
    rep = sub.add_parser("report")
    rep.add_argument("--dir", required=True)
    rep.add_argument("--timeline", required=True)
    rep.add_argument("--received", required=True)
    rep.add_argument("--grace", type=float, default=1.0,
                     help="seconds a node's /healthz may lag its first write that succeeds again")
    rep.add_argument("--assert-zero-loss", action="store_true")
    rep.add_argument("--expect-503", action="store_true")
    a = p.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: STOP.set())
    signal.signal(signal.SIGINT, lambda *_: STOP.set())
    {"load": cmd_load, "check": cmd_check, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
