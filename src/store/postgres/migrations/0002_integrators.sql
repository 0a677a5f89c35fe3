-- docs/api.md and docs/webhooks.md#the-event: idempotent create, listing, cancel and erase, retention, and
-- webhook formats. Equal to SQLite's migration 0004. Only additions, so nodes of the
-- previous release keep working during a rolling upgrade.

ALTER TABLE sites ADD COLUMN webhook_format TEXT NOT NULL DEFAULT 'standard'
    CHECK (webhook_format IN ('standard', 'everprotec'));

-- When the invite stopped being pending (verified, expired at its time, or cancelled);
-- retention counts from it. NULL while pending.
ALTER TABLE invites ADD COLUMN settled_at BIGINT;
UPDATE invites SET settled_at = CASE status
    WHEN 'verified' THEN COALESCE(verified_at, expires_at)
    ELSE expires_at END
WHERE status <> 'pending';
CREATE INDEX invites_settled ON invites (settled_at) WHERE settled_at IS NOT NULL;

-- A list page is a few range scans of these, newest first (src/store/listing.rs). Invite
-- ids are ordered by their bytes ("C"), as the pages are merged in that order; status is
-- "C" too, so list queries (which say so) never match the sweeper's partial index.
CREATE INDEX invites_by_status
    ON invites (site_id, status COLLATE "C", created_at, invite_id COLLATE "C");
CREATE INDEX invites_by_custom_id
    ON invites (site_id, custom_id, status COLLATE "C", created_at, invite_id COLLATE "C");

-- Erasing an invite finds its events, and retention finds spent requests, by these.
CREATE INDEX webhook_events_by_invite ON webhook_events (invite_id);
CREATE INDEX presentation_requests_by_expiry ON presentation_requests (expires_at);

-- Idempotency-Key of a create, remembered with the invite it made (same transaction)
-- for 24 hours; body_sha256 is the SHA-256 of the request body's bytes.
CREATE TABLE idempotency_keys (
    site_id     TEXT NOT NULL REFERENCES sites (site_id),
    key         TEXT NOT NULL,
    body_sha256 BYTEA NOT NULL,
    invite_id   TEXT NOT NULL REFERENCES invites (invite_id),
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (site_id, key)
);
CREATE INDEX idempotency_keys_by_invite ON idempotency_keys (invite_id);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
