#!/usr/bin/env python3
"""A webhook receiver for sites set to --webhook-format everprotec, standard library only.

  WEBHOOK_SECRET=whsec_... python3 examples/receiver_everprotec.py [PORT]

POST /hook  checks X-Everprotec-SHA256 (lowercase hex HMAC-SHA256 of the raw body, keyed
            with the secret's text, whsec_ included) and prints the verification.
GET  /back  is the redirect URL: it shows the vs and cid the gateway added.

Such a site is told of verifications only: {"inviteId": ..., "customId": ... or null,
"timestamp": <Unix seconds of the verification>}. Delivery is at least once, so the same
inviteId may arrive again: acknowledge it and do nothing more.
"""
import hashlib
import hmac
import html
import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlparse

SECRET = os.environ.get("WEBHOOK_SECRET", "")
verified_invites = set()


def verify(secret, headers, raw_body):
    """True when the header is the HMAC of the raw body bytes (never re-encoded JSON)."""
    expected = hmac.new(secret.encode("utf-8"), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(headers.get("x-everprotec-sha256", ""), expected)


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("content-length", 0)))
        if self.path != "/hook" or not verify(SECRET, self.headers, raw):
            print("REJECTED a request with a bad signature", flush=True)
            self.send_response(400)
            self.end_headers()
            return
        event = json.loads(raw)
        invite = event["inviteId"]
        if invite in verified_invites:
            print(f"duplicate verification of {invite}, already handled", flush=True)
        else:
            verified_invites.add(invite)
            print(
                f"verified invite {invite} (customId {event['customId']!r}) at {event['timestamp']}",
                flush=True,
            )
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        query = parse_qs(urlparse(self.path).query)
        page = (
            "<!doctype html><html lang=en><title>Back on the site</title>"
            f"<h1>Welcome back</h1><p>vs = {html.escape(query.get('vs', ['-'])[0])}</p>"
            f"<p>cid = {html.escape(query.get('cid', ['-'])[0])}</p>"
        ).encode()
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
    print(f"everprotec receiver on http://127.0.0.1:{port} (POST /hook, GET /back)", flush=True)
    HTTPServer(("127.0.0.1", port), Handler).serve_forever()
