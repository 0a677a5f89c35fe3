-- The last good copy of each credential status list, by form and uri
-- (docs/credential-status.md): the nodes sharing the database share one copy.
CREATE TABLE status_lists (
    form       TEXT NOT NULL,
    uri        TEXT NOT NULL,
    body       BLOB NOT NULL,
    iat        INTEGER NOT NULL,
    exp        INTEGER,
    fetched_at INTEGER NOT NULL,
    PRIMARY KEY (form, uri)
);
