-- The whole schema, equal to SQLite's after its migration 0003. Times are Unix seconds
-- (or milliseconds where the column says _ms) from the server process's clock, never the
-- database's; every integer is BIGINT so rows are read alike by both backends.

CREATE TABLE sites (
    site_id      TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    redirect_url TEXT,
    webhook_url  TEXT,
    sandbox      BOOLEAN NOT NULL DEFAULT FALSE,
    created_at   BIGINT NOT NULL,
    min_age      BIGINT NOT NULL DEFAULT 18 CHECK (min_age BETWEEN 1 AND 99)
);

-- Only a digest of each password is kept.
CREATE TABLE credentials (
    username        TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    password_digest BYTEA NOT NULL,
    created_at      BIGINT NOT NULL,
    revoked_at      BIGINT
);
CREATE INDEX credentials_by_site ON credentials (site_id);

-- Signing secrets must be kept as they are (the server signs with them). The current
-- one has retired_at NULL; a rotated-out one signs alongside it until retired_at + 24 h.
CREATE TABLE webhook_secrets (
    site_id    TEXT NOT NULL REFERENCES sites (site_id),
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    retired_at BIGINT
);
CREATE INDEX webhook_secrets_by_site ON webhook_secrets (site_id);

CREATE TABLE invites (
    invite_id       TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    -- UTF-8 bytes: a client's customId may hold U+0000, which TEXT cannot.
    custom_id       BYTEA,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'verified', 'expired')),
    created_at      BIGINT NOT NULL,
    expires_at      BIGINT NOT NULL,
    verified_at     BIGINT,
    verified_method TEXT CHECK (verified_method IN ('eu-av', 'sandbox', 'verifier'))
);
-- The expiry sweeper looks only at pending invites past their time.
CREATE INDEX invites_pending_by_expiry ON invites (expires_at) WHERE status = 'pending';

-- The outbox: an event row is written in the same transaction as the state change it
-- reports, so a change is never committed without its event.
CREATE TABLE webhook_events (
    event_id        TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    invite_id       TEXT NOT NULL REFERENCES invites (invite_id),
    event_type      TEXT NOT NULL,
    occurred_at     BIGINT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        BIGINT NOT NULL DEFAULT 0,
    -- Attempts made before the current round of the retry schedule (a redelivery starts one).
    round_start     BIGINT NOT NULL DEFAULT 0,
    next_attempt_ms BIGINT,
    -- A worker that claimed the event owns it until then; after, any node may take it over.
    lease_until_ms  BIGINT,
    last_status     BIGINT,
    last_error      TEXT,
    finished_at     BIGINT
);
CREATE INDEX webhook_events_due ON webhook_events (next_attempt_ms) WHERE state = 'pending';
CREATE INDEX webhook_events_by_site ON webhook_events (site_id, occurred_at);

CREATE TABLE webhook_attempts (
    event_id    TEXT NOT NULL REFERENCES webhook_events (event_id),
    attempt     BIGINT NOT NULL,
    started_ms  BIGINT NOT NULL,
    duration_ms BIGINT NOT NULL,
    http_status BIGINT,
    error       TEXT,
    PRIMARY KEY (event_id, attempt)
);

-- docs/wallets.md#the-wallet-link: the live OpenID4VP presentation requests any node can answer.
CREATE TABLE presentation_requests (
    state       TEXT PRIMARY KEY,
    invite_id   TEXT NOT NULL REFERENCES invites (invite_id),
    nonce       TEXT NOT NULL,
    min_age     BIGINT NOT NULL,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    answered_at BIGINT
);
CREATE INDEX presentation_requests_by_invite ON presentation_requests (invite_id, expires_at);
