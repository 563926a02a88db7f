//! Whether this machine can build a real BOINC-API app (Debian's libboinc-app-dev and a
//! C++ compiler): the test that builds one and runs it under boinc-rs is compiled in
//! with `cfg(boinc_app_api)`, and reported as ignored (not passed) elsewhere.

use std::path::Path;

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(boinc_app_api)");
    println!("cargo::rerun-if-changed=build.rs");
    // Installing a package changes dpkg's status file: look again then.
    let dpkg_status = Path::new("/var/lib/dpkg/status");
    if dpkg_status.is_file() {
        println!("cargo::rerun-if-changed={}", dpkg_status.display());
    }
    let header = Path::new("/usr/include/boinc/boinc_api.h").is_file();
    let library =
        ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"].iter().any(|dir| {
            Path::new(dir).join("libboinc_api.so").exists()
                || Path::new(dir).join("libboinc_api.a").exists()
        });
    if header && library && on_path("g++") {
        println!("cargo::rustc-cfg=boinc_app_api");
    } else {
        println!(
            "cargo::warning=libboinc-app-dev or g++ is missing: the real BOINC-API app test is ignored (apt-get install libboinc-app-dev g++)"
        );
    }
}
