-- Each server keeps the invites it read lately in memory (src/store/invite_cache.rs) and
-- must learn when another process (a second server, the command line) changes or erases
-- one. `data_version` says only that something was committed; this generation says an
-- invite changed, so other commits (creates, the health check's write) keep the cache.
-- Triggers keep it by construction, whatever statement changes an invite. A migration
-- that rebuilds `invites` must create them again.
CREATE TABLE invite_changes (
    only       INTEGER PRIMARY KEY CHECK (only = 0),
    generation INTEGER NOT NULL
);
INSERT INTO invite_changes (only, generation) VALUES (0, 0);
CREATE TRIGGER invite_updated AFTER UPDATE ON invites
BEGIN UPDATE invite_changes SET generation = generation + 1; END;
CREATE TRIGGER invite_deleted AFTER DELETE ON invites
BEGIN UPDATE invite_changes SET generation = generation + 1; END;
