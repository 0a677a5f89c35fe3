-- docs/wallets.md#the-wallet-link: a site's minimum age, how each invite was verified, and the live
-- OpenID4VP presentation requests any node can answer.
ALTER TABLE sites ADD COLUMN min_age INTEGER NOT NULL DEFAULT 18 CHECK (min_age BETWEEN 1 AND 99);

ALTER TABLE invites ADD COLUMN verified_method TEXT
    CHECK (verified_method IN ('eu-av', 'sandbox', 'verifier'));
-- Before this migration only the verifier API and the sandbox control verified; the
-- two cannot be told apart any more, so they are recorded as the verifier's.
UPDATE invites SET verified_method = 'verifier' WHERE status = 'verified';

CREATE TABLE presentation_requests (
    state       TEXT PRIMARY KEY,
    invite_id   TEXT NOT NULL REFERENCES invites (invite_id),
    nonce       TEXT NOT NULL,
    min_age     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    answered_at INTEGER
) WITHOUT ROWID;
CREATE INDEX presentation_requests_by_invite ON presentation_requests (invite_id, expires_at);
