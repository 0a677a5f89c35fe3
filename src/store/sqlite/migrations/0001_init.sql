CREATE TABLE sites (
    site_id      TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    redirect_url TEXT,
    webhook_url  TEXT,
    sandbox      INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL
) WITHOUT ROWID;

-- Only a digest of each password is kept.
CREATE TABLE credentials (
    username        TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    password_digest BLOB NOT NULL,
    created_at      INTEGER NOT NULL,
    revoked_at      INTEGER
) WITHOUT ROWID;
CREATE INDEX credentials_by_site ON credentials (site_id);

-- Signing secrets must be kept as they are (the server signs with them). The current
-- one has retired_at NULL; a rotated-out one signs alongside it until retired_at + 24 h.
CREATE TABLE webhook_secrets (
    site_id    TEXT NOT NULL REFERENCES sites (site_id),
    secret     TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER
);
CREATE INDEX webhook_secrets_by_site ON webhook_secrets (site_id);

CREATE TABLE invites (
    invite_id   TEXT PRIMARY KEY,
    site_id     TEXT NOT NULL REFERENCES sites (site_id),
    custom_id   TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'verified', 'expired')),
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    verified_at INTEGER
) WITHOUT ROWID;
