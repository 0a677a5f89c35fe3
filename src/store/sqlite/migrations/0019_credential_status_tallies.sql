-- docs/console.md: the overview also counts verified invites by the credential status
-- their receipts record (docs/credential-status.md). They are `invite_tallies` rows of
-- event 'credential-status' with the status in `method`, written by the writer beside
-- each wallet verification's 'verified' row, on the same day. Verifier and sandbox
-- verifications record none, and have no such row.
--
-- What is stored already, counted once: each verified invite whose receipt records a
-- status, on the day its 'verified' row counts it (migration 10). The function is the
-- migration's own (src/store/sqlite/migrations.rs registers it while migrations run).
INSERT INTO invite_tallies (day, event, method, n)
    SELECT day, 'credential-status', status, COUNT(*)
    FROM (SELECT COALESCE(verified_at, settled_at, created_at) / 86400 AS day,
                 agegate_receipt_credential_status(receipt) AS status
          FROM invites WHERE status = 'verified' AND receipt IS NOT NULL)
    WHERE status IS NOT NULL
    GROUP BY 1, 3;
