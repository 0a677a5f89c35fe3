-- The customId log keeps only late entries (src/store/sqlite/custom_ids.rs).
--
-- Appending every create's entry to `custom_id_log` rewrote the log's last page in every
-- group commit: 0.85 KB written (WAL and checkpoint) and 3–8 µs of the storage's CPU
-- per create, half of what distinct customIds added to the bytes (BENCHMARKS.md). The invite's own row already holds its
-- customId, and invite ids grow with time, so the entries not yet in a run are, but for
-- a few, the invites past a mark: `custom_id_flushed` holds the largest invite id the
-- runs have taken. A create logs its entry only when its id is not past the mark (an id
-- made before a flush and stored after it), and a flush moves the invites past the mark
-- up to a new one, with the log, into a run.
--
-- Only ids with the time prefix (30 characters) count as past the mark: ids made before
-- it are random, and every invite stored with one is in the runs already (0012).
CREATE TABLE custom_id_flushed (
    only      INTEGER PRIMARY KEY CHECK (only = 1),
    invite_id TEXT NOT NULL
);

-- Every invite stored so far is in the log or a run: the mark starts past them all.
INSERT INTO custom_id_flushed (only, invite_id)
    SELECT 1, IFNULL(MAX(invite_id), '') FROM invites WHERE length(invite_id) = 30;
