"""The client of bench/instructions.sh: on one kept-alive connection, CREATES creates
(each with a customId of its own), then GETS status reads cycling over them. Sends no
Accept-Encoding, as wrk does not, so the reads take the uncompressed path. Loopback only.

    python3 bench/instructions.py PORT SITE AUTH CREATES GETS
"""
import http.client
import json
import sys

port, site, auth = sys.argv[1], sys.argv[2], sys.argv[3]
creates, gets = int(sys.argv[4]), int(sys.argv[5])
conn = http.client.HTTPConnection("127.0.0.1", int(port))


def send(method, path, body=None):
    conn.putrequest(method, path, skip_accept_encoding=True)
    conn.putheader("Authorization", "Basic " + auth)
    if body is not None:
        conn.putheader("Content-Type", "application/json")
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    response = conn.getresponse()
    answer = response.read()
    if response.status != 200:
        sys.exit(f"instructions: {method} {path} answered {response.status}: {answer!r}")
    return answer


ids = []
for i in range(creates):
    body = json.dumps({"customId": f"user-{i * 7919 % 100003}"}).encode()
    ids.append(json.loads(send("POST", f"/v1/website/{site}/invite", body))["inviteId"])
for i in range(gets):
    send("GET", f"/v1/website/{site}/invite/{ids[i % len(ids)]}")
