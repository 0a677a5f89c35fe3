#!/usr/bin/env python3
"""A small site backend for trying agegate end to end, standard library only.

  WEBHOOK_SECRET=whsec_... python3 examples/receiver.py [PORT]

POST /hook  verifies the Standard Webhooks signature of each event and prints it.
GET  /back  is the redirect URL: it shows the vs and cid the gateway added.
"""
import base64
import html
import hashlib
import hmac
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

SECRET = os.environ.get("WEBHOOK_SECRET", "")
TOLERANCE_SECONDS = 5 * 60
seen_ids = set()


def verify(secret, headers, raw_body):
    """True when some v1 signature matches. Uses the raw body bytes, never re-encoded JSON."""
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not msg_id or not timestamp.isdigit():
        return False
    if abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False  # too old or from the future: a replay
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for candidate in headers.get("webhook-signature", "").split():
        version, _, signature = candidate.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path != "/hook" or not verify(SECRET, self.headers, raw):
            print("REJECTED a request with a bad signature", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        msg_id = self.headers["webhook-id"]
        if msg_id in seen_ids:  # delivery is at least once: acknowledge duplicates
            print(f"duplicate {msg_id}, already handled", flush=True)
        else:
            seen_ids.add(msg_id)
            event = json.loads(raw)
            print(f"verified webhook {msg_id}: {event['type']} {json.dumps(event['data'])}", flush=True)
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        query = parse_qs(urlparse(self.path).query)
        page = (
            "<!doctype html><html lang=en><title>Back on the site</title>"
            f"<h1>Welcome back</h1><p>vs = {html.escape(query.get('vs', ['-'])[0])}</p>"
            f"<p>cid = {html.escape(query.get('cid', ['-'])[0])}</p>"
        ).encode()
        print(f"visitor returned: {self.path}", flush=True)
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.end_headers()
        self.wfile.write(page)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    if not SECRET.startswith("whsec_"):
        sys.exit("set WEBHOOK_SECRET to the site's whsec_ secret")
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
    print(f"receiver on http://127.0.0.1:{port} (POST /hook, GET /back)", flush=True)
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
