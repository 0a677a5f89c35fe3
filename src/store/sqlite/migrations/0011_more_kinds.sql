-- More credentials (docs/kinds.md#credential-kinds): an invite can be verified by `eudi-pid` or `mdl` too,
-- and each site says which kinds it accepts.
--
-- The kinds are one table in the code (src/domain/kind.rs), so `verified_method` no
-- longer lists its values here: a new kind must not need a migration, and a value the
-- code does not know reads as a corrupt row rather than a wrong answer. SQLite cannot
-- drop a CHECK in place, so `invites` is rebuilt (foreign keys off, see migrations.rs),
-- with the same columns, indexes and the invite_changes triggers of 0007.
CREATE TABLE invites_new (
    invite_id       TEXT PRIMARY KEY,
    site_id         TEXT NOT NULL REFERENCES sites (site_id),
    custom_id       TEXT,
    status          TEXT NOT NULL
        CHECK (status = 'pending' OR status = 'verified' OR status = 'expired'),
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    verified_at     INTEGER,
    verified_method TEXT,
    settled_at      INTEGER,
    receipt         TEXT
) WITHOUT ROWID;
INSERT INTO invites_new (invite_id, site_id, custom_id, status, created_at, expires_at,
                         verified_at, verified_method, settled_at, receipt)
    SELECT invite_id, site_id, custom_id, status, created_at, expires_at,
           verified_at, verified_method, settled_at, receipt
    FROM invites;
DROP TABLE invites;
ALTER TABLE invites_new RENAME TO invites;
CREATE INDEX invites_settled ON invites (settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX invites_by_status ON invites (site_id, status, created_at, invite_id);
CREATE INDEX invites_by_custom_id ON invites (site_id, custom_id, status, created_at, invite_id);
CREATE TRIGGER invite_updated AFTER UPDATE ON invites
BEGIN UPDATE invite_changes SET generation = generation + 1; END;
CREATE TRIGGER invite_deleted AFTER DELETE ON invites
BEGIN UPDATE invite_changes SET generation = generation + 1; END;

-- `all`, or kind names in the table's order, comma-separated; `all` stays all when a
-- later release adds a kind.
ALTER TABLE sites ADD COLUMN accept TEXT NOT NULL DEFAULT 'all';
