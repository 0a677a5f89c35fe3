-- docs/zk.md#zero-knowledge-proofs: each site says whether its wallet requests ask for
-- a zero-knowledge proof (`off`, `prefer`, `require`; existing sites prefer, which changes
-- nothing on a server without circuits), and each presentation request keeps what it
-- offered, so any node checks an answer against it: the circuits' hashes, comma-separated
-- and newest first (NULL: no proof offered), and whether only a proof answers. Columns
-- with constant defaults rewrite no rows.
ALTER TABLE sites ADD COLUMN zk TEXT NOT NULL DEFAULT 'prefer';
ALTER TABLE presentation_requests
    ADD COLUMN zk_circuits TEXT,
    ADD COLUMN zk_required BOOLEAN NOT NULL DEFAULT false;
