-- More credentials (docs/kinds.md#credential-kinds): `eudi-pid` and `mdl` verify invites too. The kinds are
-- one table in the code (src/domain/kind.rs), so the method's list of values goes: a new
-- kind must not need a migration, and a value the code does not know reads as a corrupt
-- row. Each site says which kinds it accepts: `all`, or kind names, comma-separated.
ALTER TABLE invites DROP CONSTRAINT IF EXISTS invites_verified_method_check;
ALTER TABLE sites ADD COLUMN accept TEXT NOT NULL DEFAULT 'all';
