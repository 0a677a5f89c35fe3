#!/usr/bin/env python3
"""A SQLite database as the release before the console left it (migrations 1-7), with
N invites spread evenly over the last DAYS days: 60 % verified (by eu-av, verifier or
sandbox), 35 % expired at their time, 5 % still pending (the newest). The console's
migration then counts them into its tallies on the first start.

usage: console_seed.py PATH [N] [DAYS] [NOW]"""
import base64, os, random, sqlite3, sys, uuid
from pathlib import Path

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
days = int(sys.argv[3]) if len(sys.argv) > 3 else 35
now = int(sys.argv[4]) if len(sys.argv) > 4 else int(__import__("time").time())
migrations = sorted(Path(__file__).resolve().parent.parent.glob("src/store/sqlite/migrations/000[1-7]_*.sql"))
assert len(migrations) == 7, migrations

for suffix in ("", "-wal", "-shm"):
    try:
        os.remove(path + suffix)
    except FileNotFoundError:
        pass
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=OFF")
for sql in migrations:
    db.executescript(sql.read_text())
db.execute("PRAGMA user_version = 7")
db.execute("BEGIN")
sites = [str(uuid.uuid4()) for _ in range(5)]
for i, site in enumerate(sites):
    db.execute("INSERT INTO sites (site_id, name, created_at) VALUES (?, ?, ?)",
               (site, f"Shop {i + 1}", now - days * 86400))
rng = random.Random(7)
methods = ["eu-av", "verifier", "sandbox"]
span = days * 86400

def rows():
    for i in range(n):
        created = now - span + i * span // n
        ident = base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).rstrip(b"=").decode()
        expires = created + 86400
        r = rng.random()
        if expires > now and r >= 0.6:
            yield (ident, sites[i % 5], created, expires, "pending", None, None, None)
        elif r < 0.6:
            at = created + rng.randrange(30, 3600)
            yield (ident, sites[i % 5], created, expires, "verified", at, methods[i % 3], at)
        else:
            yield (ident, sites[i % 5], created, expires, "expired", None, None, expires)

db.executemany(
    "INSERT INTO invites (invite_id, site_id, created_at, expires_at, status, verified_at, "
    "verified_method, settled_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows())
# A backlog of undelivered events for the overview to count.
db.executemany(
    "INSERT INTO webhook_events (event_id, site_id, invite_id, event_type, occurred_at, state, "
    "next_attempt_ms) SELECT 'evt_' || invite_id, site_id, invite_id, 'invite.verified', "
    "verified_at, 'pending', verified_at * 1000 FROM invites WHERE status = 'verified' "
    "AND verified_at > ? LIMIT 1000", [(now - 3600,)])
db.execute("COMMIT")
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
print(db.execute("SELECT COUNT(*) FROM invites").fetchone()[0], "invites,",
      db.execute("SELECT COUNT(*) FROM webhook_events").fetchone()[0], "events in", path)
