//! The boundary between the client and the world (docs/design.md "The boundary between the
//! core and the world"): the control loop speaks to the world in protocol requests and
//! replies only, so nothing in it may reach into the emulator.

use std::fs;
use std::path::Path;

/// The Rust files under `dir`, its subdirectories included.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_control_loop_imports_nothing_from_the_emulator() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/control");
    let mut checked = 0;
    for path in rust_files(&dir) {
        let text = fs::read_to_string(&path).expect("readable");
        let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
        assert!(!code.contains("emulator::"), "{} uses the emulator", path.display());
        checked += 1;
    }
    assert!(checked >= 5, "the control loop's files were found");
}
