//! The boundary between the client and the world (DESIGN.md "The boundary between the
//! core and the world"): the control loop speaks to the world in protocol requests and
//! replies only, so nothing in it may reach into the emulator.

use std::fs;
use std::path::Path;

#[test]
fn the_control_loop_imports_nothing_from_the_emulator() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/control");
    let mut checked = 0;
    // The loop's files, and those of its submodules' directories.
    let mut pending = vec![dir];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("src/control") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                pending.push(path);
                continue;
            }
            let text = fs::read_to_string(&path).expect("readable");
            let code: String = text.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            assert!(!code.contains("emulator::"), "{} uses the emulator", path.display());
            checked += 1;
        }
    }
    assert!(checked >= 5, "the control loop's files were found");
}
