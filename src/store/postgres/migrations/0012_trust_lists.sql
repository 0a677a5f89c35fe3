-- The last good copy of each signed trust list, by kind of list and location
-- (docs/trust.md#where-trust-anchors-come-from): a node whose source is down starts from it.
CREATE TABLE IF NOT EXISTS trust_lists (
    list         TEXT NOT NULL,
    location     TEXT NOT NULL,
    body         BYTEA NOT NULL,
    sequence     BIGINT NOT NULL,
    issued       BIGINT NOT NULL,
    next_update  BIGINT,
    last_success BIGINT NOT NULL,
    PRIMARY KEY (list, location)
);
