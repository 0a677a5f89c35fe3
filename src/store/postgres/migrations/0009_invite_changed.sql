-- Every change of an invite notifies, with its id, the nodes' status caches
-- (src/store/postgres/status_sync.rs): by trigger, so every writer is covered — a node,
-- the command line, a client of the database. NOTIFY makes committing transactions queue
-- their notifications in commit order, which is what a node's sync relies on.
CREATE OR REPLACE FUNCTION invite_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('agegate_invite_changed', OLD.invite_id);
    RETURN NULL;
END
$$;
DROP TRIGGER IF EXISTS invite_changed ON invites;
CREATE TRIGGER invite_changed AFTER UPDATE OR DELETE ON invites
    FOR EACH ROW EXECUTE FUNCTION invite_changed();
