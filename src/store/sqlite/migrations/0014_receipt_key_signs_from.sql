-- A rotated receipt key is published before anyone signs with it
-- (docs/evidence.md#receipt-keys): `signs_from` is when servers may start signing with it,
-- in Unix seconds of the database machine's clock (one clock for every process on the
-- file); NULL while it is only published. Keys made before this, and a first key, sign at
-- once.
ALTER TABLE receipt_keys ADD COLUMN signs_from REAL DEFAULT 0;
