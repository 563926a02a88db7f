//! The platform name BOINC gives the host this client runs on (`<platform_name>`),
//! from the target the binary was built for.

/// BOINC's platform name for this build's target, e.g. `x86_64-pc-linux-gnu`.
pub fn boinc_platform() -> String {
    let arch = std::env::consts::ARCH;
    match std::env::consts::OS {
        "linux" => format!("{arch}-pc-linux-gnu"),
        "macos" => format!("{arch}-apple-darwin"),
        "windows" => format!("windows_{arch}"),
        "freebsd" => format!("{arch}-pc-freebsd"),
        os => format!("{arch}-{os}"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn linux_on_x86_64_is_named_as_boinc_names_it() {
        assert_eq!(super::boinc_platform(), "x86_64-pc-linux-gnu");
    }
}
