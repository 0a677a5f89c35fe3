#!/usr/bin/env bash
# The console's overview at a million invites (docs/console.md, "Performance"): seeds a
# SQLite database as the release before the console left it (bench/console_seed.py,
# N invites over 35 days), lets the release binary migrate it (the tallies count what is
# stored), signs in and times GET /admin/ with curl, RUNS times. For comparison it times
# the two GROUP BY queries the page would need without the tallies.
#   N=1000000 RUNS=20 bash bench/console.sh
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-1000000}
RUNS=${RUNS:-20}
BIN=target/release/agegate
[ -x "$BIN" ] || cargo build --release
DIR=$(mktemp -d)
FILE="$DIR/agegate.db"
DB="sqlite:$FILE"
PID=
cleanup() { [ -n "$PID" ] && kill "$PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$DIR"; }
trap cleanup EXIT

python3 bench/console_seed.py "$FILE" "$N" 35
start=$(date +%s.%N)
"$BIN" --database-url "$DB" admin user create bench --json > "$DIR/user.json"
echo "first start (migration 9 counts the stored invites): $(echo "$(date +%s.%N) - $start" | bc) s"
PASSWORD=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["password"])' "$DIR/user.json")

"$BIN" --database-url "$DB" serve --listen 127.0.0.1:0 --admin-listen 127.0.0.1:0 \
    --retention 0 2> "$DIR/serve.log" &
PID=$!
for _ in $(seq 100); do
    ADMIN=$(grep -o 'operator console on http://[0-9.:]*' "$DIR/serve.log" | sed 's/.*http:/http:/' || true)
    [ -n "$ADMIN" ] && break
    sleep 0.1
done
[ -n "$ADMIN" ] || { cat "$DIR/serve.log"; exit 1; }
COOKIE=$(curl -s -o /dev/null -D - --data-urlencode "username=bench" \
    --data-urlencode "password=$PASSWORD" "$ADMIN/admin/sign-in" \
    | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: \([^;]*\);.*/\1/p')
[ -n "$COOKIE" ] || { echo "sign-in failed"; exit 1; }
curl -s -H "cookie: $COOKIE" "$ADMIN/admin/" | grep -o 'id="total-created">[0-9]*' | sed 's/.*>/created in 30 days: /'
echo "GET /admin/ ($RUNS runs, seconds):"
for _ in $(seq "$RUNS"); do
    curl -s -o /dev/null -w '%{time_total}\n' -H "cookie: $COOKIE" "$ADMIN/admin/"
done | sort -n | awk '{ t[NR] = $1 } END { printf "  min %s  median %s  max %s\n", t[1], t[int((NR + 1) / 2)], t[NR] }'

echo "without the tallies, the same counts by GROUP BY (sqlite3, for comparison):"
python3 - "$FILE" <<'PY'
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1])
since = db.execute("SELECT MAX(created_at) FROM invites").fetchone()[0] - 30 * 86400
for name, sql in [
    ("created per day", "SELECT created_at / 86400, COUNT(*) FROM invites INDEXED BY invites_by_status "
     "WHERE site_id IN (SELECT site_id FROM sites) AND status IN ('pending', 'verified', 'expired') "
     "AND created_at >= ? GROUP BY 1"),
    ("verified by method and expired per day", "SELECT settled_at / 86400, status, verified_method, "
     "COUNT(*) FROM invites WHERE settled_at >= ? GROUP BY 1, 2, 3"),
]:
    t = time.perf_counter()
    db.execute(sql, (since,)).fetchall()
    print(f"  {name}: {time.perf_counter() - t:.3f} s")
PY
