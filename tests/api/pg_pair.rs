//! A PostgreSQL primary and its synchronous standby on loopback, for the failover tests
//! (docs/operations.md#high-availability-with-postgresql): the standby is made with
//! `pg_basebackup -R`; [`PgPair::kill_primary`] sends SIGKILL to the primary's postmaster
//! and every process it started, [`PgPair::promote`] promotes the standby. The same steps
//! as `scripts/proofs/pg_pair.sh`, for tests that need the in-process server's clock.

use crate::pg::{as_owner, bin_dir, free_port, is_root, require_postgres};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

pub struct PgPair {
    dir: tempfile::TempDir,
    bin: PathBuf,
    ports: [u16; 2],
}

impl PgPair {
    /// Starts the primary (with database `agegate`) and a standby it waits for on commit.
    pub fn start() -> Self {
        require_postgres();
        let dir = tempfile::Builder::new()
            .prefix("agegate-pair")
            .tempdir()
            .unwrap();
        if is_root() {
            run(Command::new("chown").arg("postgres").arg(dir.path()));
        }
        let pair = Self {
            bin: bin_dir().expect("PostgreSQL is installed"),
            ports: [free_port(), free_port()],
            dir,
        };
        run(as_owner(&pair.bin.join("initdb"))
            .arg("-D")
            .arg(pair.data(0))
            .args(["-U", "postgres", "--auth=trust", "--no-sync"]));
        pair.start_server(0);
        pair.sql(0, "CREATE DATABASE agegate");
        run(as_owner(&pair.bin.join("pg_basebackup"))
            .args(["-h", "127.0.0.1", "-p", &pair.ports[0].to_string()])
            .args([
                "-U",
                "postgres",
                "-R",
                "-X",
                "stream",
                "--no-sync",
                "--checkpoint=fast",
                "-D",
            ])
            .arg(pair.data(1)));
        // The walreceiver's name is what the primary waits for.
        let auto = pair.data(1).join("postgresql.auto.conf");
        let mut conf = std::fs::read_to_string(&auto).unwrap();
        conf.push_str(&format!(
            "primary_conninfo = 'host=127.0.0.1 port={} user=postgres application_name=standby'\n",
            pair.ports[0]
        ));
        std::fs::write(&auto, conf).unwrap();
        pair.start_server(1);
        pair.sql(0, "ALTER SYSTEM SET synchronous_standby_names = 'standby'");
        pair.sql(0, "SELECT pg_reload_conf()");
        let synced = crate::helpers::poll_blocking(Duration::from_secs(30), || {
            (pair.sql(0, "SELECT sync_state FROM pg_stat_replication") == "sync").then_some(())
        });
        assert!(
            synced.is_some(),
            "the standby is not synchronous within 30 s"
        );
        pair
    }

    /// Both servers, the writable one whichever it is.
    pub fn url(&self) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/agegate?target_session_attrs=read-write",
            self.ports[0], self.ports[1]
        )
    }

    fn data(&self, i: usize) -> PathBuf {
        self.dir.path().join(format!("pg{i}"))
    }

    fn start_server(&self, i: usize) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=on -c synchronous_commit=on \
             -c wal_level=replica -c max_wal_senders=10 -c hot_standby=on \
             -c wal_retrieve_retry_interval=1s -c max_connections=100",
            self.ports[i],
            self.dir.path().display()
        );
        run(as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data(i))
            .args(["-w", "-t", "60", "-o", &options, "-l"])
            .arg(self.dir.path().join(format!("pg{i}.log")))
            .arg("start"));
    }

    fn sql(&self, i: usize, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-X", "-q", "-At", "-h", "127.0.0.1", "-U", "postgres"])
            .args([
                "-p",
                &self.ports[i].to_string(),
                "-d",
                "postgres",
                "-c",
                sql,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// SIGKILL to the primary's postmaster and all its processes at once.
    pub fn kill_primary(&self) {
        let pid = std::fs::read_to_string(self.data(0).join("postmaster.pid")).unwrap();
        let pm = pid.lines().next().unwrap().trim().to_owned();
        let children = Command::new("ps")
            .args(["-o", "pid=", "--ppid", &pm])
            .output()
            .unwrap();
        let children = String::from_utf8(children.stdout).unwrap();
        let mut kill = Command::new("kill");
        kill.arg("-9").arg(&pm).args(children.split_whitespace());
        let _ = kill.stderr(Stdio::null()).status();
    }

    /// Promotes the standby and waits until it takes writes.
    pub fn promote(&self) {
        run(as_owner(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(self.data(1))
            .args(["-w", "-t", "60", "promote"]));
    }
}

impl Drop for PgPair {
    fn drop(&mut self) {
        for i in 0..2 {
            let _ = as_owner(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.data(i))
                .args(["-m", "immediate", "-w", "stop"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

fn run(cmd: &mut Command) {
    let out = cmd.stdout(Stdio::null()).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
