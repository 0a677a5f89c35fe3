//! Files made immutable, a real fault of a filesystem for the SQLite fault tests (the
//! small tmpfs to fill is `crate::faultfs`). It needs root; where this machine does not allow them the
//! test says why and skips.

use std::path::{Path, PathBuf};
use std::process::Command;

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
