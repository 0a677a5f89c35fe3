-- Brings a fresh benchmark cluster to the state of one that has run a while (bench/run.sh,
-- bench/backends.sh). A new cluster has three WAL segments; every further one is created
-- and zero-filled (16 MB, `wal_init_zero`) inside the commit that first needs it, about
-- once a second under creates: 3–6 % of the core and create p99s of 11–40 ms in a 10-s
-- run. A database in service reuses old segments instead (renamed at each checkpoint, as
-- many as `min_wal_size` keeps). So: `min_wal_size` 1 GB, 64 segments written once, and
-- a checkpoint that keeps them for reuse. Nothing about durability changes.
ALTER SYSTEM SET min_wal_size = '1GB';
ALTER SYSTEM SET max_wal_size = '2GB';
DO $$ BEGIN PERFORM pg_reload_conf(); END $$;
CREATE TABLE bench_warm_wal (x int);
DO $$ BEGIN
  FOR i IN 1..64 LOOP
    INSERT INTO bench_warm_wal VALUES (i);
    PERFORM pg_switch_wal();
  END LOOP;
END $$;
DROP TABLE bench_warm_wal;
CHECKPOINT;
