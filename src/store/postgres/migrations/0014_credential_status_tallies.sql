-- docs/console.md: the overview also counts verified invites by the credential status
-- their receipts record (docs/credential-status.md), as SQLite's migration 0019 does:
-- `invite_tallies` rows of event 'credential-status' with the status in `method`,
-- counted on the day the invite's 'verified' row counts it. Only additions, so nodes of
-- the previous release keep working during a rolling upgrade (their verifications
-- record no status here, and show as not recorded).

-- What a wallet verification's receipt records of the credential's status (NULL for
-- verifier and sandbox ones), written with the verification, so the trigger can count
-- it without reading the receipt.
ALTER TABLE invites ADD COLUMN IF NOT EXISTS credential_status TEXT;

-- What is stored already, counted once, read from each verified invite's receipt (the
-- payload of a compact JWS: base64url JSON). A receipt that cannot be read counts as
-- not recorded; the function is the migration's own.
CREATE FUNCTION pg_temp.receipt_credential_status(receipt TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    payload TEXT := translate(split_part(receipt, '.', 2), '-_', '+/');
BEGIN
    RETURN convert_from(
        decode(payload || repeat('=', (4 - length(payload) % 4) % 4), 'base64'), 'UTF8'
    )::jsonb ->> 'credentialStatus';
EXCEPTION WHEN others THEN
    RETURN NULL;
END $$;

INSERT INTO invite_tallies (day, event, method, n)
    SELECT day, 'credential-status', status, COUNT(*)
    FROM (SELECT COALESCE(verified_at, settled_at, created_at) / 86400 AS day,
                 pg_temp.receipt_credential_status(receipt) AS status
          FROM invites WHERE status = 'verified' AND receipt IS NOT NULL) AS stored
    WHERE status IN ('valid', 'unknown', 'unchecked', 'none')
    GROUP BY 1, 3
ON CONFLICT (day, event, method, shard) DO UPDATE SET n = invite_tallies.n + EXCLUDED.n;

DROP FUNCTION pg_temp.receipt_credential_status(TEXT);

-- Migration 7's trigger, counting also each change from pending to verified that
-- records a credential status, by that status, on the same day as its 'verified' row.
-- One pass over the changed rows: each gives its own row, and a verification with a
-- status a second one.
CREATE OR REPLACE FUNCTION invite_tally_settled() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO invite_tallies AS t (day, event, method, shard, n)
        SELECT COALESCE(n.settled_at, n.expires_at) / 86400, e.event, e.method,
               pg_backend_pid(), COUNT(*)
        FROM changed_new n JOIN changed_old o ON o.invite_id = n.invite_id
        CROSS JOIN LATERAL (VALUES
            (n.status, CASE n.status WHEN 'verified' THEN COALESCE(n.verified_method, '')
                                     ELSE '' END),
            ('credential-status', CASE n.status WHEN 'verified' THEN n.credential_status END)
        ) AS e (event, method)
        WHERE o.status = 'pending' AND n.status IN ('verified', 'expired')
          AND e.method IS NOT NULL
        GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
    ON CONFLICT (day, event, method, shard) DO UPDATE SET n = t.n + EXCLUDED.n;
    RETURN NULL;
END $$;
