-- The last good copy of each signed trust list, by kind of list and location
-- (docs/trust.md#where-trust-anchors-come-from): a node whose source is down starts from it.
CREATE TABLE trust_lists (
    list         TEXT NOT NULL,
    location     TEXT NOT NULL,
    body         BLOB NOT NULL,
    sequence     INTEGER NOT NULL,
    issued       INTEGER NOT NULL,
    next_update  INTEGER,
    last_success INTEGER NOT NULL,
    PRIMARY KEY (list, location)
);
