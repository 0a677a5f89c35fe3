-- What every insert of an invite paid for, made cheaper.

-- The sweeper's own index. The sweeper now walks each site's pending invites in
-- invites_by_status (site_id, status, created_at, ...), where those past their time
-- (created a lifetime ago) come first, so the extra B-tree goes.
DROP INDEX invites_pending_by_expiry;

-- The foreign key to sites checked its site once per row, with a query of its own: a
-- quarter of PostgreSQL's work per create. Inserts now lock their sites themselves, once
-- per statement and with the same lock (FOR KEY SHARE), so a create racing with a
-- site's deletion still either lands before it (and is erased with the site) or finds
-- the site gone (src/store/postgres/invites.rs).
ALTER TABLE invites DROP CONSTRAINT invites_site_id_fkey;
