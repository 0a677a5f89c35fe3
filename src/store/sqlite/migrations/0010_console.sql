-- docs/console.md: the operator console's accounts, sessions and sign-in throttle, and
-- the per-day tallies its overview charts.

-- Only an Argon2id hash (a PHC string) of each password is kept.
CREATE TABLE console_users (
    username      TEXT PRIMARY KEY,
    password_hash TEXT NOT NULL,
    created_at    INTEGER NOT NULL
) WITHOUT ROWID;

-- A session is found by the SHA-256 digest of the id its cookie carries; the id itself
-- is never stored. Every node reads it here, so deleting an account or signing out
-- ends the session everywhere at once.
CREATE TABLE console_sessions (
    session_digest BLOB PRIMARY KEY,
    username       TEXT NOT NULL REFERENCES console_users (username),
    created_at     INTEGER NOT NULL,
    expires_at     INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX console_sessions_by_user ON console_sessions (username);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);

-- Failed sign-ins in a row per typed name and client address, kept where every node
-- sees them (src/domain/console.rs has the rule).
CREATE TABLE console_sign_in_failures (
    username        TEXT NOT NULL,
    address         TEXT NOT NULL,
    failures        INTEGER NOT NULL,
    last_failure_at INTEGER NOT NULL,
    PRIMARY KEY (username, address)
) WITHOUT ROWID;

-- Invites created, verified (by method) and expired per UTC day (day = seconds / 86400),
-- written in the same transaction as the change they count: the SQLite writer adds a
-- batch's counts just before its commit (src/store/sqlite/tally.rs). `shard` lets
-- PostgreSQL nodes count without waiting for each other's row locks; SQLite uses 0.
-- Erasing an invite does not change them: they count what happened.
CREATE TABLE invite_tallies (
    day    INTEGER NOT NULL,
    event  TEXT NOT NULL,
    method TEXT NOT NULL DEFAULT '',
    shard  INTEGER NOT NULL DEFAULT 0,
    n      INTEGER NOT NULL,
    PRIMARY KEY (day, event, method, shard)
) WITHOUT ROWID;

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
