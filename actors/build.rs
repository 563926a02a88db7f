//! Finds the real BOINC tools the interoperability tests drive (boinccmd from Debian's
//! boinc-client, boinctui, tmux to run boinctui headless). A test whose tool is missing
//! is compiled as ignored, with the reason, so the test run shows it as skipped rather
//! than passed. The search follows PATH, and the build is redone when a PATH directory
//! changes (a package installed later is found).

use std::path::Path;

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()))
        .unwrap_or(false)
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PATH");
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path).filter(|dir| Path::new(dir).is_dir()) {
            println!("cargo:rerun-if-changed={}", dir.display());
        }
    }
    println!("cargo:rustc-check-cfg=cfg(peer_boinccmd)");
    println!("cargo:rustc-check-cfg=cfg(peer_boinctui)");
    if on_path("boinccmd") {
        println!("cargo:rustc-cfg=peer_boinccmd");
    }
    if on_path("boinctui") && on_path("tmux") {
        println!("cargo:rustc-cfg=peer_boinctui");
    }
}
