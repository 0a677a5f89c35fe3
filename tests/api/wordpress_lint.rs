//! The WordPress plugin's source: PHP's own lint on every file, and every output escaped
//! (integrations/wordpress/check-escaping.php, the escaping rule of the WordPress coding
//! standards, which Debian does not package for phpcs).

use crate::wordpress_site::{plugin_dir, require_wordpress};
use std::path::{Path, PathBuf};
use std::process::Command;

fn php_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(php_files(&path));
        } else if path.extension().is_some_and(|e| e == "php") {
            files.push(path);
        }
    }
    files.sort();
    files
}

fn checker() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("integrations/wordpress/check-escaping.php")
}

/// `php -l` on `path`: whether it passed, and what PHP said.
fn lint(path: &Path) -> (bool, String) {
    let out = Command::new("php").arg("-l").arg(path).output().unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

#[test]
fn every_php_file_of_the_plugin_and_its_test_site_passes_php_lint() {
    require_wordpress();
    let test_site = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/api/wordpress");
    let mut files = php_files(&plugin_dir());
    files.push(checker());
    files.extend(php_files(&test_site));
    assert!(files.len() >= 12, "{files:?}");
    for file in &files {
        let (ok, said) = lint(file);
        assert!(ok, "{}: {said}", file.display());
    }
    // The lint can fail.
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("broken.php");
    std::fs::write(&broken, "<?php\nfunction ( {\n").unwrap();
    assert!(!lint(&broken).0, "php -l passed a syntax error");
}

#[test]
fn every_output_of_the_plugin_is_escaped() {
    require_wordpress();
    let out = Command::new("php")
        .arg(checker())
        .arg(plugin_dir())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains(" 0 unescaped outputs"), "{said}");
}

#[test]
fn the_escaping_check_names_every_unescaped_output() {
    require_wordpress();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.php");
    let lines = [
        "<?php",
        "echo $x;",                                               // 2
        "echo '<a>' . $url . '</a>';",                            // 3
        "echo esc_html( $a ), $b;",                               // 4
        "printf( '<b>%s</b>', $x );",                             // 5
        "_e( 'Hello', 'agegate' );",                              // 6
        "print $y;",                                              // 7
        "wp_die( $message );",                                    // 8
        "exit( $m );",                                            // 9
        "echo \"hi $name\";",                                     // 10
        "echo esc_html( $a ) . 'b' . esc_attr( $c ) . (int) $d;", // fine
        "printf( '%s', esc_html( $x ) );",                        // fine
        "echo esc_html( $a ) . $b;",                              // 13
        "?>",
        "<p><?= $z ?></p>",                     // 15
        "<p><?php echo esc_html( $z ); ?></p>", // fine
    ];
    std::fs::write(&file, lines.join("\n")).unwrap();
    let out = Command::new("php")
        .arg(checker())
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let flagged: Vec<usize> = stdout
        .lines()
        .map(|l| l.split(':').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(flagged, [2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 15], "{stdout}");
}
