//! The runtime speaks the protocol's language, not the emulator's: no import of the
//! emulator outside the simulated world. Every source file of boinc-runtime is read, and
//! any code (comments aside) naming boinc-emulator outside the door allowed to it fails
//! this test with the file and line.

use std::path::{Path, PathBuf};

/// Where the emulator may be named: the simulated world.
const ALLOWED: &[&str] = &["src/sim/"];

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

/// The code of a line, without its comment.
fn code(line: &str) -> &str {
    line.find("//").map_or(line, |at| &line[..at])
}

/// Whether a line of code names the emulator module: a path through it, or the module
/// itself in a `use` list.
fn names_emulator(code: &str) -> bool {
    code.contains("emulator::")
        || code.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|word| word == "emulator")
}

#[test]
fn the_runtime_imports_nothing_from_the_emulator_outside_the_simulated_world() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 20, "the actors' sources were not found under {}", root.display());
    let mut offences = Vec::new();
    for file in &files {
        let relative = file.strip_prefix(root).expect("under the crate").to_string_lossy();
        if ALLOWED.iter().any(|allowed| relative.starts_with(allowed)) {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("source file");
        for (number, line) in text.lines().enumerate() {
            if names_emulator(code(line)) {
                offences.push(format!("{relative}:{}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(
        offences.is_empty(),
        "the runtime names the emulator outside {ALLOWED:?}; go through the effect traits \
         (actors/src/effects) and put the emulated side in actors/src/sim:\n{}",
        offences.join("\n")
    );
}

#[test]
fn the_check_sees_an_import_of_the_emulator() {
    assert!(names_emulator(code("use boinc_emulator::world::World;")));
    assert!(names_emulator(code("use boinc_core::{emulator, model};")));
    assert!(!names_emulator(code("// the emulator::world is not named here")));
    assert!(!names_emulator(code("let emulated = 1;")));
}
