-- Every insert paid for the sweeper's own index. The sweeper now walks each site's
-- pending invites in invites_by_status (site_id, status, created_at, ...), where those
-- past their time (created 24 hours ago) come first, so the extra B-tree goes.
DROP INDEX invites_pending_by_expiry;
