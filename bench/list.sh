#!/usr/bin/env bash
# The cost of one list page (GET /v1/website/{siteId}/invite) with a million stored
# invites, on the release binary over loopback: the first page, a page deep down (by
# cursor), a customId filter and status filters. Bounded: each wrk run lasts DURATION
# seconds; everything lives in a temporary directory that is removed at the end.
#
#   bash bench/list.sh                      # SQLite; INVITES=1000000 DURATION=5
#   BACKEND=postgres bash bench/list.sh     # a throwaway PostgreSQL cluster (Debian's package)
#
# Invites are preloaded with SQL (a recursive CTE on SQLite, generate_series on
# PostgreSQL) into the schema the binary migrated, spread evenly over the last SPAN
# seconds (default 1,000,000, about 11.6 days) whatever their number, so every size has
# the same mix: the last day's (8.6%) pending, the older ones settled (a tenth of them
# verified, the rest expired); ten invites per customId ("user-0", "user-1", …).
set -euo pipefail
cd "$(dirname "$0")/.."

BACKEND=${BACKEND:-sqlite}
INVITES=${INVITES:-1000000}
SPAN=${SPAN:-1000000}
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-4}
PORT=${PORT:-18081}

command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null || { echo "list.sh: install wrk first" >&2; exit 1; }; }
cargo build --release --quiet
bin=$PWD/target/release/agegate

work=$(mktemp -d)
chmod 755 "$work"
server=
pg_ctl=
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null || true
    [ -n "$pg_ctl" ] && $as_pg "$pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
as_pg=
[ "$(id -u)" = 0 ] && as_pg="runuser -u postgres --"

if [ "$BACKEND" = postgres ]; then
    pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    pg_ctl=$pgbin/pg_ctl
    [ -n "$as_pg" ] && chown postgres: "$work"
    $as_pg "$pgbin/initdb" -D "$work/pg" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync >/dev/null
    $as_pg "$pg_ctl" -D "$work/pg" -w -l "$work/pg.log" \
        -o "-c listen_addresses=127.0.0.1 -p 15433 -k $work -c shared_buffers=256MB" start >/dev/null
    export AGEGATE_DATABASE_URL=postgres://postgres@127.0.0.1:15433/postgres
    sql() { psql -X -q -v ON_ERROR_STOP=1 -At "$AGEGATE_DATABASE_URL" -c "$1"; }
else
    export AGEGATE_DATABASE_URL="sqlite:$work/list.db"
    sql() { sqlite3 -batch "$work/list.db" "$1"; }
fi

site=$($bin site create --name bench --json)
get() { python3 -c "import json,sys; print(json.loads(sys.argv[1])['$1'])" "$site"; }
site_id=$(get siteId); auth=$(printf '%s:%s' "$(get username)" "$(get password)" | base64 -w0)
now=$(date +%s)

# Row i (1..INVITES) was created at now - SPAN + i * SPAN / INVITES; expires a day later.
echo "== preloading $INVITES invites ($BACKEND)"
start=$(date +%s.%N)
if [ "$BACKEND" = postgres ]; then
    sql "INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at,
                              verified_at, verified_method, settled_at)
         SELECT id, '$site_id', convert_to('user-' || (i % ($INVITES / 10)), 'UTF8'), st, c, c + 86400,
                CASE WHEN st = 'verified' THEN c + 60 END,
                CASE WHEN st = 'verified' THEN 'verifier' END,
                CASE st WHEN 'verified' THEN c + 60 WHEN 'expired' THEN c + 86400 END
         FROM (SELECT i, substr(md5(random()::text || i), 1, 22) AS id,
                      $now - $SPAN + i * $SPAN / $INVITES AS c,
                      CASE WHEN $now - $SPAN + i * $SPAN / $INVITES > $now - 86400 THEN 'pending'
                           WHEN i % 10 = 0 THEN 'verified' ELSE 'expired' END AS st
               FROM generate_series(1::BIGINT, $INVITES) AS i) AS g;
         ANALYZE invites;"
else
    sql "PRAGMA journal_mode = WAL;
         INSERT INTO invites (invite_id, site_id, custom_id, status, created_at, expires_at,
                              verified_at, verified_method, settled_at)
         WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $INVITES),
              g AS (SELECT i, hex(randomblob(11)) AS id, $now - $SPAN + i * $SPAN / $INVITES AS c,
                           CASE WHEN $now - $SPAN + i * $SPAN / $INVITES > $now - 86400 THEN 'pending'
                                WHEN i % 10 = 0 THEN 'verified' ELSE 'expired' END AS st
                    FROM n)
         SELECT id, '$site_id', 'user-' || (i % ($INVITES / 10)), st, c, c + 86400,
                CASE WHEN st = 'verified' THEN c + 60 END,
                CASE WHEN st = 'verified' THEN 'verifier' END,
                CASE st WHEN 'verified' THEN c + 60 WHEN 'expired' THEN c + 86400 END
         FROM g;
         -- The customIds as the server keeps them (src/store/sqlite/custom_ids.rs): one
         -- sorted run, as migration 12 makes of the invites stored before it.
         INSERT INTO custom_id_runs (run, site_id, custom_id, created_at, invite_id)
         SELECT 1, site_id, custom_id, created_at, invite_id FROM invites
         WHERE custom_id IS NOT NULL ORDER BY site_id, custom_id, created_at, invite_id;
         INSERT INTO custom_id_run_list (run, entries) SELECT 1, count(*) FROM custom_id_runs;
         ANALYZE;" >/dev/null
fi
echo "   $(sql "SELECT count(*) FROM invites") invites stored in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"

# A cursor half-way down: the position of the invite in the middle.
middle=$(sql "SELECT created_at || '.' || invite_id FROM invites
              ORDER BY created_at, invite_id LIMIT 1 OFFSET $INVITES / 2")
cursor=$(printf '%s' "$middle" | base64 -w0 | tr '+/' '-_' | tr -d '=')

if [ "$BACKEND" = postgres ]; then
    # The query of one slice (src/store/postgres/invites.rs), as the status=pending and
    # the customId filters run it: an index range in order, a few dozen buffers.
    for filter in "" "AND i.custom_id = convert_to('user-42', 'UTF8')"; do
        echo "== EXPLAIN of a slice ${filter:+with a customId}"
        sql "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
             SELECT i.invite_id FROM invites i
             WHERE i.site_id = '$site_id' AND i.status COLLATE \"C\" = 'pending' $filter
               AND i.created_at >= $now - 86399
               AND (i.created_at, i.invite_id COLLATE \"C\") < (9223372036854775807, '')
               AND i.expires_at >= $now + 1 AND i.expires_at < 9223372036854775807
             ORDER BY i.created_at DESC, i.invite_id COLLATE \"C\" DESC LIMIT 51" | sed 's/^/   /'
    done
fi

RUST_LOG=warn $bin serve --listen "127.0.0.1:$PORT" --retention 0 2>"$work/server.log" &
server=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

cat > "$work/auth.lua" <<LUA
wrk.headers["Authorization"] = "Basic $auth"
LUA
# One client, one request at a time on a kept-alive connection: the cost of a page alone.
cat > "$work/latency.py" <<'PY'
import base64, http.client, json, statistics, sys, time
port, path, auth, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", int(port))
times, page = [], None
for _ in range(n):
    t = time.perf_counter()
    conn.request("GET", path, headers={"Authorization": "Basic " + auth})
    resp = conn.getresponse()
    body = resp.read()
    times.append((time.perf_counter() - t) * 1000)
    assert resp.status == 200, (resp.status, body)
    page = json.loads(body)
times.sort()
print(f"   {len(page['data'])} invites, next page: {page['nextCursor'] is not None}; "
      f"one at a time: median {statistics.median(times):.2f} ms, p99 {times[int(n * 0.99) - 1]:.2f} ms")
PY
path="/v1/website/$site_id/invite"
for query in "limit=50" "limit=50&cursor=$cursor" "customId=user-42" \
             "status=verified&limit=50" "status=pending&limit=50" "status=expired&limit=50" \
             "status=verified&customId=user-40" "limit=500"; do
    echo "== GET ?${query/$cursor/<deep cursor>}"
    python3 "$work/latency.py" "$PORT" "$path?$query" "$auth" 300
    wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/auth.lua" "http://127.0.0.1:$PORT$path?$query" \
        | grep -E "Requests/sec|Non-2xx" | sed "s/^ */   $CONNECTIONS connections for ${DURATION}s: /"
done
