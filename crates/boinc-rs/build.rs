//! Finds the real peers some tests need, so a test whose peer is missing is compiled as
//! ignored, with the reason, and the test run shows it as skipped rather than passed:
//! - `cfg(boinc_app_api)`: Debian's libboinc-app-dev and a C++ compiler, to build a real
//!   BOINC-API app and run it under boinc-rs;
//! - `cfg(peer_boinccmd)`, `cfg(peer_boinctui)`: the real BOINC tools the GUI RPC
//!   interoperability tests drive (boinctui runs headless under tmux);
//! - `cfg(peer_boinc)`: the real BOINC client (`boinc`, with `boinccmd` to attach it),
//!   which the project server's interoperability tests run against it;
//! - `cfg(peer_opencl_pocl)`: the OpenCL ICD loader (ocl-icd-libopencl1) with pocl's
//!   driver (pocl-opencl-icd), whose CPU device the OpenCL discovery tests enumerate.
//! - `cfg(peer_proxies)`: Debian's tinyproxy (an HTTP proxy) and microsocks (a SOCKS5
//!   proxy), which the proxy tests send the client's requests through.
//! - `cfg(peer_chromium)`: Debian's chromium and chromium-driver (chromedriver), which
//!   the web dashboard's tests drive headless over the WebDriver protocol.
//! - `cfg(peer_xvfb)`: Xvfb, xdotool and libXss (packages xvfb, xdotool, libxss1): a
//!   virtual X server, synthetic input and the screensaver query, for the user-activity
//!   test (the X screensaver's idle time).
//!
//! The search follows PATH and dpkg's status, and the build is redone when either
//! changes (a package installed later is found).

use std::path::Path;

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(boinc_app_api)");
    println!("cargo::rustc-check-cfg=cfg(peer_boinccmd)");
    println!("cargo::rustc-check-cfg=cfg(peer_boinctui)");
    println!("cargo::rustc-check-cfg=cfg(peer_boinc)");
    println!("cargo::rustc-check-cfg=cfg(peer_opencl_pocl)");
    println!("cargo::rustc-check-cfg=cfg(peer_chromium)");
    println!("cargo::rustc-check-cfg=cfg(peer_xvfb)");
    println!("cargo::rustc-check-cfg=cfg(peer_proxies)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=PATH");
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path).filter(|dir| dir.is_dir()) {
            println!("cargo::rerun-if-changed={}", dir.display());
        }
    }
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
    if on_path("boinccmd") {
        println!("cargo::rustc-cfg=peer_boinccmd");
    }
    if on_path("boinc") && on_path("boinccmd") {
        println!("cargo::rustc-cfg=peer_boinc");
    } else {
        println!(
            "cargo::warning=the real BOINC client is missing: the project server's real-client tests are ignored (apt-get install boinc-client)"
        );
    }
    if on_path("boinctui") && on_path("tmux") {
        println!("cargo::rustc-cfg=peer_boinctui");
    }
    if on_path("tinyproxy") && on_path("microsocks") {
        println!("cargo::rustc-cfg=peer_proxies");
    } else {
        println!(
            "cargo::warning=tinyproxy or microsocks is missing: the proxy tests are ignored (apt-get install tinyproxy microsocks)"
        );
    }
    if on_path("chromium") && on_path("chromedriver") {
        println!("cargo::rustc-cfg=peer_chromium");
    } else {
        println!(
            "cargo::warning=chromium or chromedriver is missing: the web dashboard's browser tests are ignored (apt-get install chromium chromium-driver)"
        );
    }
    let xss = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
        .iter()
        .any(|dir| Path::new(dir).join("libXss.so.1").exists());
    if on_path("Xvfb") && on_path("xdotool") && xss {
        println!("cargo::rustc-cfg=peer_xvfb");
    } else {
        println!(
            "cargo::warning=Xvfb, xdotool or libXss is missing: the X11 user-activity test is ignored (apt-get install xvfb xdotool libxss1)"
        );
    }
    let loader = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
        .iter()
        .any(|dir| Path::new(dir).join("libOpenCL.so.1").exists());
    if loader && Path::new("/etc/OpenCL/vendors/pocl.icd").is_file() {
        println!("cargo::rustc-cfg=peer_opencl_pocl");
    } else {
        println!(
            "cargo::warning=the OpenCL ICD loader or pocl is missing: the OpenCL discovery tests are ignored (apt-get install ocl-icd-libopencl1 pocl-opencl-icd)"
        );
    }
}
