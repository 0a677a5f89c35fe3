-- The last good copy of each credential status list, by form and uri
-- (docs/credential-status.md): the nodes sharing the database share one copy.
CREATE TABLE IF NOT EXISTS status_lists (
    form       TEXT NOT NULL,
    uri        TEXT NOT NULL,
    body       BYTEA NOT NULL,
    iat        BIGINT NOT NULL,
    exp        BIGINT,
    fetched_at BIGINT NOT NULL,
    PRIMARY KEY (form, uri)
);
