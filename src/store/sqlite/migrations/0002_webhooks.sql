-- The outbox: an event row is written in the same transaction as the state change it
-- reports, so a change is never committed without its event.
CREATE TABLE webhook_events (
    event_id        TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    invite_id       TEXT NOT NULL REFERENCES invites (invite_id),
    event_type      TEXT NOT NULL,
    occurred_at     INTEGER NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
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
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_ms) WHERE state = 'pending';
CREATE INDEX webhook_events_by_site ON webhook_events (site_id, occurred_at);

CREATE TABLE webhook_attempts (
    event_id    TEXT NOT NULL REFERENCES webhook_events (event_id),
    attempt     INTEGER NOT NULL,
    started_ms  INTEGER NOT NULL,
    duration_ms INTEGER NOT NULL,
    http_status INTEGER,
    error       TEXT,
    PRIMARY KEY (event_id, attempt)
) WITHOUT ROWID;

-- The expiry sweeper looks only at pending invites past their time.
CREATE INDEX invites_pending_by_expiry ON invites (expires_at) WHERE status = 'pending';
