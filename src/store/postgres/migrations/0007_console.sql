-- docs/console.md: the operator console's accounts, sessions and sign-in throttle, and
-- the per-day tallies its overview charts. Equal to SQLite's migration 0009; only
-- additions, so nodes of the previous release keep working during a rolling upgrade
-- (and their changes are counted too: the triggers below are the database's).

-- Only an Argon2id hash (a PHC string) of each password is kept.
CREATE TABLE console_users (
    username      TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at    BIGINT NOT NULL
);

-- A session is found by the SHA-256 digest of the id its cookie carries; the id itself
-- is never stored. Every node reads it here, so deleting an account or signing out
-- ends the session everywhere at once.
CREATE TABLE console_sessions (
    session_digest BYTEA PRIMARY KEY,
    username       TEXT NOT NULL REFERENCES console_users (username),
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL
);
CREATE INDEX console_sessions_by_user ON console_sessions (username);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- Failed sign-ins in a row per typed name and client address, kept where every node
-- sees them (src/domain/console.rs has the rule).
CREATE TABLE console_sign_in_failures (
    username        TEXT NOT NULL,
    address         TEXT NOT NULL,
    failures        BIGINT NOT NULL,
    last_failure_at BIGINT NOT NULL,
    PRIMARY KEY (username, address)
);

-- Invites created, verified (by method) and expired per UTC day (day = seconds / 86400).
-- Statement-level triggers add each statement's counts in its own transaction. Each
-- server connection counts in rows of its own (shard = its backend's pid), so nodes
-- never wait for each other's lock on a day's row, and a transaction that changes
-- invites in two statements cannot deadlock with another on the counts. Erasing an
-- invite does not change them: they count what happened.
CREATE TABLE invite_tallies (
    day    BIGINT NOT NULL,
    event  TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT '',
    shard  BIGINT NOT NULL DEFAULT 0,
    n      BIGINT NOT NULL,
    PRIMARY KEY (day, event, method, shard)
);

-- What is stored already, counted once.
INSERT INTO invite_tallies (day, event, method, n)
    SELECT created_at / 86400, 'created', '', COUNT(*) FROM invites GROUP BY 1;
INSERT INTO invite_tallies (day, event, method, n)
    SELECT COALESCE(verified_at, settled_at, created_at) / 86400, 'verified',
           COALESCE(verified_method, 'verifier'), COUNT(*)
    FROM invites WHERE status = 'verified' GROUP BY 1, 3;
INSERT INTO invite_tallies (day, event, method, n)
    SELECT COALESCE(settled_at, expires_at) / 86400, 'expired', '', COUNT(*)
    FROM invites WHERE status = 'expired' GROUP BY 1;

CREATE FUNCTION invite_tally_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO invite_tallies AS t (day, event, method, shard, n)
        SELECT created_at / 86400, 'created', '', pg_backend_pid(), COUNT(*)
        FROM created_invites GROUP BY 1 ORDER BY 1
    ON CONFLICT (day, event, method, shard) DO UPDATE SET n = t.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER invite_tally_created AFTER INSERT ON invites
    REFERENCING NEW TABLE AS created_invites
    FOR EACH STATEMENT EXECUTE FUNCTION invite_tally_created();

-- A change from pending to verified counts on the day it was verified, by its method;
-- to expired on the day it expired (its time, or the cancel).
CREATE FUNCTION invite_tally_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO invite_tallies AS t (day, event, method, shard, n)
        SELECT COALESCE(n.settled_at, n.expires_at) / 86400, n.status,
               CASE n.status WHEN 'verified' THEN COALESCE(n.verified_method, '') ELSE '' END,
               pg_backend_pid(), COUNT(*)
        FROM changed_new n JOIN changed_old o ON o.invite_id = n.invite_id
        WHERE o.status = 'pending' AND n.status IN ('verified', 'expired')
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (day, event, method, shard) DO UPDATE SET n = t.n + EXCLUDED.n;
    RETURN NULL;
END $$;
CREATE TRIGGER invite_tally_settled AFTER UPDATE ON invites
    REFERENCING OLD TABLE AS changed_old NEW TABLE AS changed_new
    FOR EACH STATEMENT EXECUTE FUNCTION invite_tally_settled();
