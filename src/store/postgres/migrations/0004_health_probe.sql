-- `/healthz` proves that the database makes a write durable by committing one here: the
-- table is emptied (a new, empty file) and one row written, so the write needs a new
-- page from the disk just as a create that fills a page does. On a full disk it fails
-- ("could not extend file"), where an update of a row in place would still succeed.
CREATE TABLE health_probe (checked_at BIGINT NOT NULL);
