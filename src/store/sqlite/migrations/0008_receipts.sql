-- Verification receipts (docs/evidence.md#receipts): each verified invite keeps the receipt signed
-- in the transaction that verified it, and the database keeps every receipt key, so every
-- node signs with the current one and old receipts stay checkable (/.well-known/jwks.json).
-- The newest key (highest seq) is current. A key is the 32-byte P-256 scalar.
CREATE TABLE receipt_keys (
    seq         INTEGER PRIMARY KEY,
    kid         TEXT NOT NULL UNIQUE,
    private_key BLOB NOT NULL,
    created_at  INTEGER NOT NULL
);
ALTER TABLE invites ADD COLUMN receipt TEXT;
