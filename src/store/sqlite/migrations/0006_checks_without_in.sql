-- The same tables with the same rules, each CHECK of a list of values written as
-- comparisons. SQLite evaluates `x IN ('a', 'b', 'c')` (three or more constants) by
-- building a temporary B-tree of the list, for every row written: the two such checks on
-- invites cost about 5 µs per insert, more than the insert itself (BENCHMARKS.md).
-- SQLite cannot change a CHECK in place, so both tables are rebuilt (the procedure of
-- https://sqlite.org/lang_altertable.html#otheralter: foreign keys off, see migrations.rs).

CREATE TABLE invites_new (
    invite_id       TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    custom_id       TEXT,
    status          TEXT NOT NULL
        CHECK (status = 'pending' OR status = 'verified' OR status = 'expired'),
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    verified_at     INTEGER,
    verified_method TEXT
        CHECK (verified_method = 'eu-av' OR verified_method = 'sandbox' OR verified_method = 'verifier'),
    settled_at      INTEGER
) WITHOUT ROWID;
INSERT INTO invites_new (invite_id, site_id, custom_id, status, created_at, expires_at,
                         verified_at, verified_method, settled_at)
    SELECT invite_id, site_id, custom_id, status, created_at, expires_at,
           verified_at, verified_method, settled_at
    FROM invites;
DROP TABLE invites;
ALTER TABLE invites_new RENAME TO invites;
CREATE INDEX invites_settled ON invites (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX invites_by_status ON invites (site_id, status, created_at, invite_id);
CREATE INDEX invites_by_custom_id ON invites (site_id, custom_id, status, created_at, invite_id);

CREATE TABLE webhook_events_new (
    event_id        TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    invite_id       TEXT NOT NULL REFERENCES invites (invite_id),
    event_type      TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL,
    state           TEXT NOT NULL
        CHECK (state = 'pending' OR state = 'delivered' OR state = 'failed'),
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- Attempts made before the current round of the retry schedule (a redelivery starts one).
    round_start     INTEGER NOT NULL DEFAULT 0,
    next_attempt_ms INTEGER,
    -- A worker that claimed the event owns it until then; after, anyone may take it over.
    lease_until_ms  INTEGER,
    last_status     INTEGER,
    last_error      TEXT,
    finished_at     INTEGER
) WITHOUT ROWID;
INSERT INTO webhook_events_new (event_id, site_id, invite_id, event_type, occurred_at, state,
                                attempts, round_start, next_attempt_ms, lease_until_ms,
                                last_status, last_error, finished_at)
    SELECT event_id, site_id, invite_id, event_type, occurred_at, state,
           attempts, round_start, next_attempt_ms, lease_until_ms,
           last_status, last_error, finished_at
    FROM webhook_events;
DROP TABLE webhook_events;
ALTER TABLE webhook_events_new RENAME TO webhook_events;
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_ms) WHERE state = 'pending';
CREATE INDEX webhook_events_by_site ON webhook_events (site_id, occurred_at);
CREATE INDEX webhook_events_by_invite ON webhook_events (invite_id);
