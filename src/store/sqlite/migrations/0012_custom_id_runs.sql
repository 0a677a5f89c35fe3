-- The customId lookup as sorted runs (src/store/sqlite/custom_ids.rs).
--
-- An index on (site_id, custom_id, ...) puts every create's entry on a random leaf: one
-- more page per create in the commit's WAL frames and one more for the checkpointer to
-- copy, which cost distinct customIds 40 % of create throughput. Instead, a create
-- appends its entry to `custom_id_log` (keyed by the invite id, which grows with time,
-- so appends land on the last page; not by a trigger, which would give every INSERT of
-- an invite a statement journal); the writer moves the log, sorted, into runs of
-- `custom_id_runs` (keyed by run first, so a run is written in order at its end), and
-- merges runs of a size into one larger run, a few hundred entries per group commit. A
-- lookup reads the log and each run listed in `custom_id_run_list`.
--
-- A trigger keeps log and runs in step with `invites` by construction: whatever erases
-- an invite erases its entry wherever it is (the customId is personal data; nothing of
-- an erased invite may stay).
CREATE TABLE custom_id_log (
    invite_id  TEXT PRIMARY KEY,
    site_id    TEXT NOT NULL,
    custom_id  TEXT NOT NULL,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE custom_id_runs (
    run        INTEGER NOT NULL,
    site_id    TEXT NOT NULL,
    custom_id  TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    invite_id  TEXT NOT NULL,
    PRIMARY KEY (run, site_id, custom_id, created_at, invite_id)
) WITHOUT ROWID;

-- Every run a lookup reads, with how many entries it holds (a hint for choosing merges:
-- erasures do not update it).
CREATE TABLE custom_id_run_list (
    run     INTEGER PRIMARY KEY,
    entries INTEGER NOT NULL
);

CREATE TRIGGER invite_custom_id_erased AFTER DELETE ON invites
WHEN OLD.custom_id IS NOT NULL
BEGIN
    DELETE FROM custom_id_log WHERE invite_id = OLD.invite_id;
    DELETE FROM custom_id_runs
    WHERE run IN (SELECT run FROM custom_id_run_list)
      AND site_id = OLD.site_id AND custom_id = OLD.custom_id
      AND created_at = OLD.created_at AND invite_id = OLD.invite_id;
END;

-- The invites stored so far become the first run, written in its order.
INSERT INTO custom_id_runs (run, site_id, custom_id, created_at, invite_id)
    SELECT 1, site_id, custom_id, created_at, invite_id FROM invites
    WHERE custom_id IS NOT NULL
    ORDER BY site_id, custom_id, created_at, invite_id;
INSERT INTO custom_id_run_list (run, entries)
    SELECT 1, count(*) FROM custom_id_runs WHERE run = 1 HAVING count(*) > 0;

DROP INDEX invites_by_custom_id;
