#!/usr/bin/env python3
"""Load generator and checker for the reliability proofs; standard library only.

Threads, one keep-alive http.client connection each, to 127.0.0.1 only. Every run is
bounded by a count and by a time, and stops early on SIGTERM/SIGINT (finishing the
request in flight); it then prints one JSON summary line on stdout.

  load.py create --port P --site ID --user U --password PW [--concurrency 16]
                 [--count N] [--seconds S] [--rate R] [--get] [--prefix P] [--out FILE]
      POST /v1/website/ID/invite with {"customId": "<prefix>-<n>"}. Each invite
      acknowledged with a complete 200 is appended to FILE as "inviteId customId" the
      moment it arrives. --rate paces creates (per second, all threads together; 0 = as
      fast as they go); --get also reads each created invite back; --stop-on-error
      ends a client at its first broken exchange (else it backs off and goes on).

  load.py check --port P --site ID --user U --password PW --in FILE [--concurrency 16]
      GET every invite listed in FILE; each must answer 200 with its customId. Exits 1
      if any is missing (404) or differs; retries connection errors and 5xx briefly.

  load.py verify --port P --token T --in FILE --out FILE [--concurrency 4] [--seconds S]
      POST /v1/verifier/invite/ID {"outcome": "verified"} for every invite in FILE, until
      each is acknowledged with 200 (retrying through server restarts, bounded by S).
"""
import argparse
import base64
import http.client
import json
import signal
import sys
import threading
import time

HOST = "127.0.0.1"  # loopback only, by design
TIMEOUT = 10


class Client:
    """One keep-alive connection; reconnects after any error."""

    def __init__(self, port, headers):
        self.port = port
        self.headers = headers
        self.conn = None
        self.retry_after = None  # of the last answer

    def request(self, method, path, body=None):
        """(status, body bytes); raises OSError/HTTPException on a broken exchange."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=TIMEOUT)
        try:
            self.conn.request(method, path, body=body, headers=self.headers)
            resp = self.conn.getresponse()
            data = resp.read()  # the whole body, or an exception: no partial acks
            self.retry_after = resp.getheader("Retry-After")
            if resp.will_close:
                self.close()
            return resp.status, data
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def basic(user, password):
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    return {"Authorization": f"Basic {token}", "Content-Type": "application/json"}


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.statuses = {}
        self.errors = 0
        self.latencies = []
        self.acked = 0

    def status(self, code):
        with self.lock:
            self.statuses[str(code)] = self.statuses.get(str(code), 0) + 1

    def error(self):
        with self.lock:
            self.errors += 1

    def summary(self, **extra):
        lat = sorted(self.latencies)

        def pct(p):
            return round(lat[min(len(lat) - 1, int(p * len(lat)))] * 1000, 2) if lat else None

        return dict(statuses=self.statuses, errors=self.errors, acked=self.acked,
                    p50_ms=pct(0.50), p99_ms=pct(0.99), **extra)


STOP = threading.Event()


def on_signal(signum, frame):
    STOP.set()


def run_threads(n, target):
    threads = [threading.Thread(target=target, daemon=True) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.2)  # short joins so signals are handled promptly


def read_ids(path):
    pairs = []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if parts:
                pairs.append((parts[0], parts[1] if len(parts) > 1 else None))
    return pairs


def cmd_create(a):
    stats = Stats()
    out = open(a.out, "a") if a.out else None
    lock = threading.Lock()
    issued = [0]
    started = time.monotonic()
    deadline = started + a.seconds
    create_path = f"/v1/website/{a.site}/invite"

    def next_slot():
        """The number of the next create, or None when the run is over; paces by --rate."""
        with lock:
            if issued[0] >= a.count:
                return None
            n = issued[0]
            issued[0] += 1
        if a.rate > 0:
            at = started + n / a.rate
            delay = at - time.monotonic()
            if delay > 0 and STOP.wait(min(delay, max(0.0, deadline - time.monotonic()))):
                return None
        if STOP.is_set() or time.monotonic() >= deadline:
            return None
        return n

    def worker():
        client = Client(a.port, basic(a.user, a.password))
        while True:
            n = next_slot()
            if n is None:
                break
            custom_id = f"{a.prefix}-{n}"
            body = json.dumps({"customId": custom_id}).encode()
            t0 = time.monotonic()
            try:
                status, data = client.request("POST", create_path, body)
            except (OSError, http.client.HTTPException):
                stats.error()
                if a.stop_on_error:
                    break  # this request was cut off; the proof stops this client here
                STOP.wait(0.05)  # the server is gone or restarting: back off a little
                continue
            elapsed = time.monotonic() - t0
            stats.status(status)
            if status != 200:
                continue
            invite_id = json.loads(data)["inviteId"]
            with stats.lock:
                stats.acked += 1
                stats.latencies.append(elapsed)
                if out:
                    out.write(f"{invite_id} {custom_id}\n")
                    out.flush()
            if a.get:
                try:
                    status, _ = client.request("GET", f"{create_path}/{invite_id}")
                    stats.status(f"get-{status}")
                except (OSError, http.client.HTTPException):
                    stats.error()
        client.close()

    run_threads(a.concurrency, worker)
    if out:
        out.close()
    elapsed = time.monotonic() - started
    print(json.dumps(stats.summary(seconds=round(elapsed, 2),
                                   per_second=round(stats.acked / elapsed, 1) if elapsed else 0)))


def cmd_check(a):
    pairs = read_ids(a.input)
    lock = threading.Lock()
    queue = list(reversed(pairs))
    missing, mismatched, present, unreachable = [], [], [0], []
    deadline = time.monotonic() + a.seconds

    def look(client, invite_id, custom_id):
        """'present', 'missing', 'mismatched' or 'unchecked' (no answer within bounds)."""
        for _ in range(50):
            if STOP.is_set() or time.monotonic() > deadline:
                break
            try:
                status, data = client.request("GET", f"/v1/website/{a.site}/invite/{invite_id}")
            except (OSError, http.client.HTTPException):
                status, data = None, b""
            if status == 200:
                record = json.loads(data)[0]
                same = record["inviteId"] == invite_id and (custom_id is None or record["customId"] == custom_id)
                return "present" if same else "mismatched"
            if status == 404:
                return "missing"
            time.sleep(0.1)  # connection error or 5xx: the server may be settling
        return "unchecked"

    def worker():
        client = Client(a.port, basic(a.user, a.password))
        while not STOP.is_set():
            with lock:
                if not queue:
                    break
                invite_id, custom_id = queue.pop()
            outcome = look(client, invite_id, custom_id)
            with lock:
                if outcome == "present":
                    present[0] += 1
                else:
                    {"missing": missing, "mismatched": mismatched, "unchecked": unreachable}[outcome].append(invite_id)
        client.close()

    run_threads(a.concurrency, worker)
    result = dict(checked=len(pairs), present=present[0], missing=len(missing),
                  mismatched=len(mismatched), unchecked=len(unreachable) + len(queue),
                  missing_ids=missing[:10], mismatched_ids=mismatched[:10])
    print(json.dumps(result))
    sys.exit(0 if present[0] == len(pairs) else 1)


def cmd_verify(a):
    pairs = read_ids(a.input)
    lock = threading.Lock()
    queue = list(reversed(pairs))
    stats = Stats()
    out = open(a.out, "a")
    deadline = time.monotonic() + a.seconds
    headers = {"Authorization": f"Bearer {a.token}", "Content-Type": "application/json"}
    body = json.dumps({"outcome": "verified"}).encode()

    def worker():
        client = Client(a.port, headers)
        while not STOP.is_set() and time.monotonic() < deadline:
            with lock:
                if not queue:
                    break
                invite_id, custom_id = queue.pop()
            while not STOP.is_set() and time.monotonic() < deadline:
                try:
                    status, _ = client.request("POST", f"/v1/verifier/invite/{invite_id}", body)
                except (OSError, http.client.HTTPException):
                    stats.error()
                    STOP.wait(0.1)  # the server is restarting: try again
                    continue
                stats.status(status)
                if status == 200:
                    with lock:
                        stats.acked += 1
                        out.write(f"{invite_id} {custom_id}\n")
                        out.flush()
                    break
                if status in (404, 409):
                    break  # cannot become verified: not acknowledged, reported by status
                STOP.wait(0.1)
            if a.pause > 0:
                STOP.wait(a.pause)
        client.close()

    run_threads(a.concurrency, worker)
    out.close()
    print(json.dumps(stats.summary(total=len(pairs), left=len(queue))))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)

    def common(sp, auth=True):
        sp.add_argument("--port", type=int, required=True)
        sp.add_argument("--concurrency", type=int, default=16)
        sp.add_argument("--seconds", type=float, default=60)
        if auth:
            sp.add_argument("--site", required=True)
            sp.add_argument("--user", required=True)
            sp.add_argument("--password", required=True)

    c = sub.add_parser("create")
    common(c)
    c.add_argument("--count", type=int, default=100_000)
    c.add_argument("--rate", type=float, default=0)
    c.add_argument("--get", action="store_true")
    c.add_argument("--stop-on-error", action="store_true",
                   help="a client stops after its first broken exchange (errors then counts requests cut off)")
    c.add_argument("--prefix", default="load")
    c.add_argument("--out")
    k = sub.add_parser("check")
    common(k)
    k.add_argument("--in", dest="input", required=True)
    v = sub.add_parser("verify")
    common(v, auth=False)
    v.add_argument("--token", required=True)
    v.add_argument("--in", dest="input", required=True)
    v.add_argument("--out", required=True)
    v.add_argument("--pause", type=float, default=0, help="seconds each thread waits between invites")
    a = p.parse_args()
    if a.concurrency < 1 or a.concurrency > 64:
        p.error("--concurrency must be 1..64")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    {"create": cmd_create, "check": cmd_check, "verify": cmd_verify}[a.cmd](a)


if __name__ == "__main__":
    main()
