//! Faults of the disk for the tests: a small tmpfs to fill (as root; where the machine
//! does not allow it, the test says why and skips).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted at a directory, unmounted (lazily) when dropped.
pub struct Tmpfs {
    pub path: PathBuf,
}

impl Tmpfs {
    /// `None`, having said why, where this machine does not let the test mount one.
    pub fn mount(path: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(path).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(path)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(Self {
                path: path.to_owned(),
            }),
            Ok(out) => {
                eprintln!(
                    "skipping: cannot mount a small tmpfs here (needs root): {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("skipping: cannot run mount: {e}");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// Writes zeros to `path` until the filesystem is full.
pub fn fill(path: &Path) {
    const ENOSPC: i32 = 28;
    let mut file = std::fs::File::create(path).unwrap();
    let chunk = vec![0u8; 64 * 1024];
    loop {
        match file.write(&chunk) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(ENOSPC) => break,
            Err(e) => panic!("filling the disk: {e}"),
        }
    }
}
