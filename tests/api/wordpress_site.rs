//! A throwaway WordPress for the plugin's end-to-end test: Debian's WordPress copied to a
//! temporary directory, on a MariaDB of its own (a data directory and a socket in the same
//! directory, no TCP port), served by PHP's built-in server on a free loopback port, with
//! the plugin's zip made from `integrations/wordpress/agegate` for the test to upload.
//!
//! Needs Debian's `wordpress`, `wordpress-theme-twentytwentythree`, `php-cli`,
//! `php-mysql`, `php-curl` and `mariadb-server` (`bash scripts/setup.sh` installs them);
//! without them the test fails and says so. Every process is stopped, and the directory
//! removed, when the value is dropped.

use crate::helpers::poll_blocking;
use serde_json::Value;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tempfile::TempDir;

const WORDPRESS: &str = "/usr/share/wordpress";
pub const ADMIN_PASSWORD: &str = "admin-pass-7Qd";
pub const READER_PASSWORD: &str = "reader-pass-3Jx";
/// The salt the verified cookie's HMAC is keyed with (`wp_salt('auth')` is key + salt).
const AUTH_KEY: &str = "test-auth-key";
const AUTH_SALT: &str = "test-auth-salt";

/// What the test's own PHP files live in: the router, the installer, a must-use plugin.
fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/wordpress")
}

/// The plugin's folder in the repository.
pub fn plugin_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/wordpress/agegate")
}

/// Fails the test, saying how to fix it, where a package is missing.
pub fn require_wordpress() {
    let missing: Vec<&str> = [
        "/usr/share/wordpress/wp-load.php",
        "/usr/share/wordpress/wp-content/themes/twentytwentythree",
        "/usr/bin/php",
        "/usr/sbin/mariadbd",
        "/usr/bin/mariadb-install-db",
    ]
    .into_iter()
    .filter(|p| !Path::new(p).exists())
    .collect();
    assert!(
        missing.is_empty(),
        "{} not found; run `bash scripts/setup.sh` to install WordPress, PHP and MariaDB",
        missing.join(", ")
    );
}

pub struct WordPress {
    /// `http://127.0.0.1:{port}`: the site's home.
    pub base: String,
    /// What install.php made: post and user ids (`gated`, `open`, `mixed`, `reader`, `second`).
    pub ids: Value,
    php: Option<Child>,
    mariadb: Option<Child>,
    dir: TempDir,
}

impl WordPress {
    pub fn start() -> Self {
        require_wordpress();
        let dir = tempfile::tempdir().unwrap();
        let mariadb = Some(start_mariadb(dir.path()));
        let mut site = Self {
            base: String::new(),
            ids: Value::Null,
            php: None,
            mariadb,
            dir,
        };
        let root = site.root();
        run(Command::new("cp").arg("-a").arg(WORDPRESS).arg(&root));
        let mu = root.join("wp-content/mu-plugins");
        std::fs::create_dir_all(&mu).unwrap();
        std::fs::copy(fixtures().join("test-site.php"), mu.join("test-site.php")).unwrap();
        // The port is free when asked for but could be taken before PHP binds it; PHP
        // then exits, and another port is tried. The home URL is a constant of
        // wp-config.php, so the database does not depend on the port.
        for attempt in 0..3 {
            site.base = format!("http://127.0.0.1:{}", free_port());
            std::fs::write(
                root.join("wp-config.php"),
                config(site.dir.path(), &site.base),
            )
            .unwrap();
            if attempt == 0 {
                site.ids = site.install();
            }
            site.php = Some(serve(&root, site.port(), site.dir.path()));
            if site.ready() {
                return site;
            }
            eprintln!(
                "php -S at {} did not answer:\n{}",
                site.base,
                site.log("php.log")
            );
            if let Some(mut php) = site.php.take() {
                stop_group(&mut php);
            }
        }
        panic!("php -S did not answer in 3 tries");
    }

    fn port(&self) -> u16 {
        self.host().rsplit(':').next().unwrap().parse().unwrap()
    }

    /// The plugin's zip, made as docs/wordpress.md says.
    pub fn plugin_zip(&self) -> PathBuf {
        let zip = self.dir.path().join("agegate.zip");
        run(Command::new("python3")
            .args(["-m", "zipfile", "-c"])
            .arg(&zip)
            .arg("agegate")
            .current_dir(plugin_dir().parent().unwrap()));
        zip
    }

    /// `install.php`: the site, its users and posts, the plugin activated.
    fn install(&self) -> Value {
        let out = self.php_cli(&[
            &fixtures().join("install.php").display().to_string(),
            &self.root().display().to_string(),
            self.host(),
            ADMIN_PASSWORD,
            READER_PASSWORD,
        ]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("install.php said {out:?}: {e}"))
    }

    /// Whether this PHP server answers the open post within 20 s (not another process
    /// that took the port).
    fn ready(&mut self) -> bool {
        let addr: std::net::SocketAddr = self.host().parse().unwrap();
        let request = format!(
            "GET /visiting-hours/ HTTP/1.0\r\nHost: {}\r\n\r\n",
            self.host()
        );
        let Some(php) = self.php.as_mut() else {
            return false;
        };
        poll_blocking(Duration::from_secs(20), || {
            if matches!(php.try_wait(), Ok(Some(_))) {
                return Some(false);
            }
            let mut stream =
                std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5)).ok()?;
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .ok()?;
            stream.write_all(request.as_bytes()).ok()?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer).ok()?;
            (answer.starts_with("HTTP/1.0 200") && answer.contains("OPEN-MARKER")).then_some(true)
        }) == Some(true)
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().join("wp")
    }

    /// `127.0.0.1:{port}`.
    pub fn host(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A post's id from install.php's answer.
    pub fn id(&self, what: &str) -> i64 {
        self.ids[what].as_i64().unwrap()
    }

    /// `return EXPRESSION;` run inside WordPress (wp-load.php); its value.
    pub fn eval(&self, code: &str) -> Value {
        let out = self.php_cli(&[
            &fixtures().join("eval.php").display().to_string(),
            &self.root().display().to_string(),
            self.host(),
            code,
        ]);
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("eval.php said {out:?}: {e}"))
    }

    /// Adds PHP lines to wp-config.php, before WordPress loads (as a site owner would
    /// add constants).
    pub fn configure(&self, lines: &str) {
        let path = self.root().join("wp-config.php");
        let config = std::fs::read_to_string(&path).unwrap();
        let marker = "/* That's all. */";
        std::fs::write(&path, config.replace(marker, &format!("{lines}\n{marker}"))).unwrap();
    }

    /// A log file of the directory: `php.log` (the server), `debug.log` (WordPress).
    pub fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.path().join(name)).unwrap_or_default()
    }

    /// WordPress's log without PHP's deprecation notices about WordPress 6.1 itself.
    pub fn errors(&self) -> String {
        let log = self.log("debug.log");
        let lines: Vec<&str> = log
            .lines()
            .filter(|l| !l.contains("PHP Deprecated"))
            .collect();
        lines.join("\n")
    }

    /// The HMAC key of the verified cookie: WordPress's `wp_salt('auth')`.
    pub fn auth_salt(&self) -> String {
        format!("{AUTH_KEY}{AUTH_SALT}")
    }

    fn php_cli(&self, args: &[&str]) -> String {
        let out = Command::new("php")
            .args(["-d", "opcache.enable_cli=0"])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "php {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for WordPress {
    fn drop(&mut self) {
        for child in [self.php.as_mut(), self.mariadb.as_mut()]
            .into_iter()
            .flatten()
        {
            stop_group(child);
        }
    }
}

/// wp-config.php: the database on its socket, the home URL, fixed salts (the test
/// recomputes the verified cookie's HMAC), errors to debug.log, no cron, and no HTTP
/// request leaving loopback.
fn config(dir: &Path, base: &str) -> String {
    let socket = dir.join("mysqld.sock");
    let debug_log = dir.join("debug.log");
    let mut keys = String::new();
    for name in [
        "SECURE_AUTH_KEY",
        "LOGGED_IN_KEY",
        "NONCE_KEY",
        "SECURE_AUTH_SALT",
        "LOGGED_IN_SALT",
        "NONCE_SALT",
    ] {
        keys.push_str(&format!("define( '{name}', 'test-{name}' );\n"));
    }
    format!(
        r#"<?php
define( 'DB_NAME', 'wordpress' );
define( 'DB_USER', 'root' );
define( 'DB_PASSWORD', '' );
define( 'DB_HOST', 'localhost:{socket}' );
define( 'DB_CHARSET', 'utf8mb4' );
define( 'DB_COLLATE', '' );
define( 'WP_HOME', '{base}' );
define( 'WP_SITEURL', '{base}' );
define( 'AUTH_KEY', '{AUTH_KEY}' );
define( 'AUTH_SALT', '{AUTH_SALT}' );
{keys}define( 'WP_DEBUG', true );
define( 'WP_DEBUG_DISPLAY', false );
define( 'WP_DEBUG_LOG', '{debug_log}' );
define( 'DISABLE_WP_CRON', true );
define( 'AUTOMATIC_UPDATER_DISABLED', true );
define( 'WP_HTTP_BLOCK_EXTERNAL', true );
$table_prefix = 'wp_';
/* That's all. */
if ( ! defined( 'ABSPATH' ) ) {{
	define( 'ABSPATH', __DIR__ . '/' );
}}
require_once ABSPATH . 'wp-settings.php';
"#,
        socket = socket.display(),
        debug_log = debug_log.display(),
    )
}

/// A data directory made by mariadb-install-db and a server on a socket in `dir` (no
/// TCP), with the `wordpress` database.
fn start_mariadb(dir: &Path) -> Child {
    let data = dir.join("db");
    let small = [
        "--innodb-buffer-pool-size=16M",
        "--innodb-log-file-size=8M",
        "--skip-log-bin",
    ];
    run(Command::new("mariadb-install-db")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .args(["--user=root", "--skip-test-db"])
        .arg("--auth-root-authentication-method=normal")
        .args(small)
        .stdout(Stdio::null()));
    let socket = dir.join("mysqld.sock");
    let log = std::fs::File::create(dir.join("mariadb.log")).unwrap();
    let mut child = Command::new("mariadbd")
        .arg("--no-defaults")
        .args(["--user=root", "--skip-networking"])
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .args(small)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start mariadbd: {e}"));
    let up = poll_blocking(Duration::from_secs(60), || {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return Some(false);
        }
        std::os::unix::net::UnixStream::connect(&socket)
            .ok()
            .map(|_| true)
    });
    if up != Some(true) {
        let log = std::fs::read_to_string(dir.join("mariadb.log")).unwrap_or_default();
        stop_group(&mut child);
        panic!("mariadbd did not start:\n{log}");
    }
    run(Command::new("mariadb")
        .arg("--no-defaults")
        .arg(format!("--socket={}", socket.display()))
        .args(["-u", "root", "-e", "CREATE DATABASE wordpress"]));
    child
}

/// `php -S` on `port` with the router, in a process group of its own (it forks workers).
/// Without opcache: it rechecks files only every 2 s, and the test edits wp-config.php.
fn serve(root: &Path, port: u16, dir: &Path) -> Child {
    let log = std::fs::File::create(dir.join("php.log")).unwrap();
    Command::new("php")
        .args(["-d", "opcache.enable=0", "-S"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("-t")
        .arg(root)
        .arg(fixtures().join("router.php"))
        .env("PHP_CLI_SERVER_WORKERS", "2")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start php -S: {e}"))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

/// Runs a command to success, or fails the test with its output.
fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// SIGTERM to the process group of `child` (PHP's workers, MariaDB), SIGKILL if it has
/// not exited within 10 s; then reaps it.
fn stop_group(child: &mut Child) {
    if matches!(child.try_wait(), Ok(None)) {
        let group = format!("-{}", child.id());
        let signal = |name: &str| {
            // `-s NAME -- -PGID`: procps-ng reads `kill -KILL -1234` as group -1.
            let _ = Command::new("kill")
                .args(["-s", name, "--", &group])
                .stderr(Stdio::null())
                .status();
        };
        signal("TERM");
        let exited = poll_blocking(Duration::from_secs(10), || {
            (!matches!(child.try_wait(), Ok(None))).then_some(())
        });
        if exited.is_none() {
            signal("KILL");
        }
    }
    let _ = child.wait();
}
