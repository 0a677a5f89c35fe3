#!/usr/bin/env python3
"""A webhook receiver for the delivery proof; standard library only, loopback only.

  WEBHOOK_SECRET=whsec_... receiver.py --port P --control-port C --log FILE

Hooks (any path on P): verifies the Standard Webhooks signature exactly like
examples/receiver.py (raw body, every v1 entry, 5-minute timestamp tolerance); a bad
signature gets 400 and is counted. Otherwise, in mode "ok" it appends one line
"<unix time> <webhook-id> <type> <inviteId> <status>" to FILE (flushed before the answer)
and answers 204; in mode "500" it answers 500 and records nothing (not accepted).

Control (on C, never affected by the modes):
  POST /mode/ok | /mode/500   how to answer hooks
  POST /stop                  close the hook listener: deliveries get "connection refused"
  POST /start                 listen on P again
  GET  /stats                 JSON counts: accepted, unique, duplicates, answered_500, rejected
The receiver exits on SIGTERM/SIGINT, or by itself after --max-seconds (default 3600).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = os.environ.get("WEBHOOK_SECRET", "")
TOLERANCE_SECONDS = 5 * 60
HOST = "127.0.0.1"


def verify(secret, headers, raw_body):
    """True when some v1 signature matches. Uses the raw body bytes, never re-encoded JSON."""
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not msg_id or not timestamp.isdigit():
        return False
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in headers.get("webhook-signature", "").split():
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class State:
    def __init__(self, log_path):
        self.lock = threading.Lock()
        self.mode = "ok"
        self.log = open(log_path, "a")
        self.seen = {}
        self.accepted = 0
        self.answered_500 = 0
        self.rejected = 0

    def stats(self):
        with self.lock:
            return {"mode": self.mode, "accepted": self.accepted, "unique": len(self.seen),
                    "duplicates": self.accepted - len(self.seen),
                    "answered_500": self.answered_500, "rejected": self.rejected}


STATE = None


class HookHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if not verify(SECRET, self.headers, raw):
            with STATE.lock:
                STATE.rejected += 1
            return self.answer(400)
        with STATE.lock:
            if STATE.mode == "500":
                STATE.answered_500 += 1
                status = 500
            else:
                msg_id = self.headers["webhook-id"]
                event = json.loads(raw)
                data = event.get("data") or {}
                STATE.log.write(f"{time.time():.3f} {msg_id} {event.get('type')} "
                                f"{data.get('inviteId')} {data.get('status')}\n")
                STATE.log.flush()  # recorded before it is acknowledged
                STATE.accepted += 1
                STATE.seen[msg_id] = STATE.seen.get(msg_id, 0) + 1
                status = 204
        self.answer(status)

    def answer(self, status):
        self.send_response(status)
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class Hooks:
    """The hook listener, which can be closed and opened again on the same port."""

    def __init__(self, port):
        self.port = port
        self.server = None
        self.thread = None
        self.lock = threading.Lock()

    def start(self):
        with self.lock:
            if self.server is None:
                for _ in range(50):  # the port may take a moment to be free again
                    try:
                        self.server = ThreadingHTTPServer((HOST, self.port), HookHandler)
                        break
                    except OSError:
                        time.sleep(0.1)
                else:
                    raise RuntimeError(f"cannot listen on {HOST}:{self.port} again")
                self.server.daemon_threads = True
                self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
                self.thread.start()

    def stop(self):
        with self.lock:
            if self.server is not None:
                self.server.shutdown()
                self.server.server_close()  # from now on: connection refused
                self.server = None


HOOKS = None


class ControlHandler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path in ("/mode/ok", "/mode/500"):
            with STATE.lock:
                STATE.mode = self.path.rsplit("/", 1)[1]
        elif self.path == "/stop":
            HOOKS.stop()
        elif self.path == "/start":
            HOOKS.start()
        else:
            return self.reply(404, {"error": "unknown control"})
        self.reply(200, STATE.stats())

    def do_GET(self):
        if self.path != "/stats":
            return self.reply(404, {"error": "unknown control"})
        self.reply(200, STATE.stats())

    def reply(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def main():
    global STATE, HOOKS
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--control-port", type=int, required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--max-seconds", type=float, default=3600)
    a = p.parse_args()
    if not SECRET.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the site's whsec_ secret")
    STATE = State(a.log)
    HOOKS = Hooks(a.port)
    HOOKS.start()
    control = ThreadingHTTPServer((HOST, a.control_port), ControlHandler)
    control.daemon_threads = True
    threading.Thread(target=control.serve_forever, daemon=True).start()
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    print(f"receiver: hooks on http://{HOST}:{a.port}, control on http://{HOST}:{a.control_port}",
          file=sys.stderr, flush=True)
    done.wait(a.max_seconds)
    HOOKS.stop()
    control.shutdown()
    print(json.dumps(STATE.stats()), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
