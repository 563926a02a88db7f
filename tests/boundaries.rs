//! The repository's structure, checked: each crate depends only on what its job needs
//! (docs/design.md "The boundary between the core and the world"), ARCHITECTURE.md names
//! every source file, and nothing reads outside the repository.

use std::fs;
use std::path::{Path, PathBuf};

fn repository() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The files under `dir` (its subdirectories included) whose names end in `suffix`.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let entries = fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for entry in entries {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            found.extend(files(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found
}

/// Every crate's source directory.
fn source_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![repository().join("src"), repository().join("actors/src")];
    let crates = fs::read_dir(repository().join("crates")).expect("crates/");
    dirs.extend(crates.map(|entry| entry.expect("an entry").path().join("src")));
    dirs.sort();
    dirs
}

/// The names in a manifest's `[dependencies]` table.
fn dependencies(manifest: &str) -> Vec<String> {
    let text = fs::read_to_string(repository().join(manifest)).expect("a manifest");
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            inside = line == "[dependencies]";
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') {
            let name = line.split(['=', '.']).next().unwrap_or_default().trim();
            names.push(name.to_string());
        }
    }
    assert!(!names.is_empty(), "{manifest} has dependencies");
    names
}

#[test]
fn each_crate_depends_only_on_what_its_job_needs() {
    // (crate, what it must not pull in)
    let rules: [(&str, &[&str]); 5] = [
        // Pure and deterministic: no runtime, no I/O, no command line.
        (
            "Cargo.toml",
            &[
                "tokio",
                "actix",
                "actix-rt",
                "actix-web",
                "reqwest",
                "nix",
                "sysinfo",
                "clap",
                "indicatif",
                "tracing-subscriber",
                "boinc-runtime",
                "boinc-service",
            ],
        ),
        ("crates/emulator/Cargo.toml", &["tokio", "actix", "reqwest", "nix", "clap", "rsa"]),
        // What an embedder pulls in: the actors, none of the binary's or the server's.
        (
            "actors/Cargo.toml",
            &[
                "clap",
                "indicatif",
                "actix-web",
                "rsa",
                "reqwest",
                "nix",
                "sysinfo",
                "nvml-wrapper",
                "tracing-subscriber",
            ],
        ),
        ("crates/service/Cargo.toml", &["clap", "indicatif", "actix-web", "rsa", "boinc-web"]),
        // The dashboard reads and acts through GUI RPC's operations only: not the live
        // effects, not the network, not the signing.
        (
            "crates/web/Cargo.toml",
            &["boinc-service", "boinc-project-server", "reqwest", "nix", "rsa", "clap"],
        ),
    ];
    for (manifest, forbidden) in rules {
        let found = dependencies(manifest);
        for name in forbidden {
            assert!(!found.iter().any(|n| n == name), "{manifest} depends on {name}");
        }
    }
}

#[test]
fn architecture_names_every_source_file() {
    let architecture =
        fs::read_to_string(repository().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut missing = Vec::new();
    let mut checked = 0;
    for dir in source_dirs() {
        for file in files(&dir, ".rs") {
            checked += 1;
            let name = file.file_name().expect("a name").to_string_lossy().into_owned();
            // A module's root file is named by its directory.
            let named = if ["mod.rs", "lib.rs", "main.rs"].contains(&name.as_str()) {
                let parent = file.parent().expect("a directory");
                let folder = parent.file_name().expect("named").to_string_lossy();
                folder == "src" || architecture.contains(&format!("{folder}/"))
            } else {
                architecture.contains(&name)
            };
            if !named {
                missing
                    .push(file.strip_prefix(repository()).unwrap_or(&file).display().to_string());
            }
        }
    }
    assert!(checked > 200, "the sources were found ({checked} files)");
    assert!(missing.is_empty(), "ARCHITECTURE.md does not name {missing:?}");
}

#[test]
fn nothing_reads_outside_the_repository() {
    // Spelled in two pieces so that this file does not name it.
    let outside = format!("{}/shared", "..");
    let mut found = Vec::new();
    let mut dirs = source_dirs();
    dirs.extend(["tests", "examples", "benches", "docs"].map(|d| repository().join(d)));
    for dir in dirs {
        for suffix in [".rs", ".md", ".toml", ".sh"] {
            for file in files(&dir, suffix) {
                let text = fs::read_to_string(&file).unwrap_or_default();
                if text.contains(&outside) {
                    found.push(file.display().to_string());
                }
            }
        }
    }
    for dir in source_dirs() {
        let manifest = dir.parent().expect("a crate").join("Cargo.toml");
        let text = fs::read_to_string(&manifest).expect("a manifest");
        assert!(!text.contains(&outside), "{} names {outside}", manifest.display());
    }
    assert!(found.is_empty(), "these files name {outside}: {found:?}");
}
