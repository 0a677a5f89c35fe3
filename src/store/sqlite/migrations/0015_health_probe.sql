-- `/healthz`'s write (docs/operations.md#health): one row, replaced by every check, whose
-- blob spans more pages than any create writes, so the check needs more new room in the
-- WAL than a create does and fails on a full disk whenever a create would. Replacing the
-- row reuses the pages it frees, so the file does not grow with the checks.
CREATE TABLE health_probe (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    filler BLOB NOT NULL
);
