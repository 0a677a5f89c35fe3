//! Throwaway PostgreSQL clusters for the tests: Debian's `postgresql` package
//! (`bash scripts/setup.sh` installs it), `initdb` into a temporary directory, a free
//! loopback port, removed afterwards. As root, the server runs as the `postgres` user
//! (PostgreSQL refuses to run as root).
//!
//! The suite runs against PostgreSQL when `AGEGATE_TEST_BACKEND=postgres` (one shared
//! cluster per test process, one fresh database per test); tests of PostgreSQL faults
//! start a cluster of their own so they can stop it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Whether this run of the suite uses PostgreSQL.
pub fn postgres_backend() -> bool {
    std::env::var("AGEGATE_TEST_BACKEND").is_ok_and(|v| v == "postgres")
}

/// The directory of `initdb`, `pg_ctl` and `postgres`, if PostgreSQL is installed.
pub fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|p| p.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

/// Fails the test, saying how to fix it, where PostgreSQL is not installed.
pub fn require_postgres() {
    assert!(
        bin_dir().is_some(),
        "PostgreSQL is not installed; run `bash scripts/setup.sh`"
    );
}

pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// A command run as the server's owner: `postgres` when we are root.
pub fn as_owner(program: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

pub struct PgCluster {
    pub port: u16,
    dir: tempfile::TempDir,
    bin: PathBuf,
}

impl PgCluster {
    /// Creates and starts a cluster; panics with PostgreSQL's own words if it cannot.
    pub fn start() -> Self {
        Self::start_in(&std::env::temp_dir())
    }

    /// [`PgCluster::start`] with the cluster's files under `parent` (a small filesystem,
    /// say, to fill).
    pub fn start_in(parent: &Path) -> Self {
        require_postgres();
        let bin = bin_dir().expect("PostgreSQL is installed");
        let dir = tempfile::Builder::new()
            .prefix("agegate-pg")
            .tempdir_in(parent)
            .unwrap();
        if is_root() {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap()
                .success();
            assert!(ok, "chown of the cluster directory");
        }
        let data = dir.path().join("data");
        let out = as_owner(&bin.join("initdb"))
            .args([
                "-D",
                data.to_str().unwrap(),
                "-U",
                "postgres",
                "--auth=trust",
            ])
            .args(["--encoding=UTF8", "--locale=C.UTF-8", "--no-sync"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = Self {
            port: free_port(),
            dir,
            bin,
        };
        cluster.start_server();
        cluster
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Starts (or restarts) the server on the cluster's port.
    pub fn start_server(&self) {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=on -c max_connections=300",
            self.port,
            self.dir.path().display()
        );
        let out = as_owner(&self.bin.join("pg_ctl"))
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-w",
                "-t",
                "30",
                "-o",
                &options,
            ])
            .arg("-l")
            .arg(self.dir.path().join("server.log"))
            .arg("start")
            .stdout(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pg_ctl start: {}{}",
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(self.dir.path().join("server.log")).unwrap_or_default()
        );
    }

    /// Stops the server at once, as a crash or an outage would.
    pub fn stop_server(&self) {
        let _ = as_owner(&self.bin.join("pg_ctl"))
            .args([
                "-D",
                self.data().to_str().unwrap(),
                "-m",
                "immediate",
                "-w",
                "stop",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// The URL of database `name` on this cluster.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database; its URL.
    pub fn create_database(&self) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "t{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let out = Command::new("psql")
            .args(["-X", "-q", "-v", "ON_ERROR_STOP=1"])
            .arg(self.url("postgres"))
            .args(["-c", &format!("CREATE DATABASE {name}")])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "createdb: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.url(&name)
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        self.stop_server();
    }
}

/// The suite's shared cluster, started on first use. Statics are never dropped, so a
/// watchdog stops the server and removes its directory once this process has exited.
pub fn shared() -> &'static PgCluster {
    static SHARED: OnceLock<PgCluster> = OnceLock::new();
    SHARED.get_or_init(|| {
        let cluster = PgCluster::start();
        let script = format!(
            "while [ -d /proc/{pid} ]; do sleep 0.5; done; \
             '{pg_ctl}' -D '{data}' -m immediate stop >/dev/null 2>&1; rm -rf '{dir}'",
            pid = std::process::id(),
            pg_ctl = cluster.bin.join("pg_ctl").display(),
            data = cluster.data().display(),
            dir = cluster.dir.path().display(),
        );
        let _ = as_owner(Path::new("/bin/sh"))
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        cluster
    })
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}
