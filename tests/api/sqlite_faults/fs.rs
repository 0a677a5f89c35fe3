//! Real faults of a filesystem for the SQLite fault tests: a small tmpfs to fill up,
//! and files made immutable. Both need root; where this machine does not allow them the
//! test says why and skips.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted at a directory, unmounted (lazily) when dropped.
pub(super) struct Tmpfs {
    pub(super) path: PathBuf,
}

impl Tmpfs {
    /// `None`, having said why, where this machine does not let the test mount one.
    pub(super) fn mount(path: &Path, size: &str) -> Option<Self> {
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
pub(super) fn fill(path: &Path) {
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

fn chattr(flag: &str, path: &Path) -> Result<(), String> {
    let out = Command::new("chattr")
        .arg(flag)
        .arg(path)
        .output()
        .map_err(|e| format!("cannot run chattr: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

/// Whether files in `dir` can be made immutable; says why not if they cannot.
pub(super) fn chattr_works(dir: &Path) -> bool {
    let probe = dir.join("probe");
    std::fs::write(&probe, b"probe").unwrap();
    let works = chattr("+i", &probe).and_then(|()| chattr("-i", &probe));
    let _ = std::fs::remove_file(&probe);
    if let Err(e) = &works {
        eprintln!(
            "skipping: cannot make a file immutable in {} (needs root and a filesystem \
             such as ext4): {e}",
            dir.display()
        );
    }
    works.is_ok()
}

/// Files made immutable (`chattr +i`) until cleared or dropped.
pub(super) struct Immutable {
    files: Vec<PathBuf>,
}

impl Immutable {
    pub(super) fn set(files: &[PathBuf]) -> Self {
        let mut set = Self { files: Vec::new() };
        for file in files {
            chattr("+i", file).unwrap();
            set.files.push(file.clone());
        }
        set
    }

    pub(super) fn clear(&mut self) {
        for file in self.files.drain(..) {
            chattr("-i", &file).unwrap();
        }
    }
}

impl Drop for Immutable {
    fn drop(&mut self) {
        for file in &self.files {
            let _ = chattr("-i", file);
        }
    }
}
