//! What `/proc/cpuinfo` adds to sysinfo's view of the processor: its feature flags
//! (`<p_features>`) and its cache (`<m_cache>`), as the real client reports them.

/// The longest feature list kept, bytes (a modern x86 CPU lists about 1,500).
const MAX_FEATURES: usize = 8192;

/// The processor's features and cache, from the first processor's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuInfo {
    /// Feature flags, space-separated (x86 `flags`, ARM `Features`).
    pub(crate) features: String,
    /// Cache size, bytes (x86 `cache size`); 0 when not listed.
    pub(crate) cache_bytes: f64,
}

/// Reads the first processor's `flags`/`Features` and `cache size` lines of a
/// `/proc/cpuinfo` text; anything missing or unreadable is left empty.
pub(crate) fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else { continue };
        let value = value.trim();
        match key.trim() {
            "flags" | "Features" if info.features.is_empty() => {
                let mut end = value.len().min(MAX_FEATURES);
                while !value.is_char_boundary(end) {
                    end -= 1;
                }
                info.features = value[..end].to_string();
            }
            "cache size" if info.cache_bytes == 0.0 => info.cache_bytes = cache_bytes(value),
            _ => {}
        }
    }
    info
}

/// `512 KB` (or MB) in bytes; 0 when it does not read.
fn cache_bytes(value: &str) -> f64 {
    let mut parts = value.split_whitespace();
    let Some(Ok(number)) = parts.next().map(str::parse::<f64>) else { return 0.0 };
    let unit = match parts.next().map(str::to_ascii_uppercase).as_deref() {
        Some("KB") => 1024.0,
        Some("MB") => 1024.0 * 1024.0,
        Some("GB") => 1024.0 * 1024.0 * 1024.0,
        _ => 1.0,
    };
    if number.is_finite() && number >= 0.0 { number * unit } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_and_cache_of_the_first_processor() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncache size\t: 36864 KB\n\
                    flags\t\t: fpu vme sse2 avx2\n\nprocessor\t: 1\nflags\t\t: other\n";
        let info = parse_cpuinfo(text);
        assert_eq!(info.features, "fpu vme sse2 avx2");
        assert_eq!(info.cache_bytes, 36864.0 * 1024.0);
        let arm = parse_cpuinfo("Features\t: fp asimd evtstrm aes\nCPU part\t: 0xd0c\n");
        assert_eq!(arm, CpuInfo { features: "fp asimd evtstrm aes".into(), cache_bytes: 0.0 });
    }

    #[test]
    fn hostile_text_is_bounded_and_never_fails() {
        let huge = format!("flags : {}\ncache size : -5 KB\n", "é".repeat(10_000));
        let info = parse_cpuinfo(&huge);
        assert!(info.features.len() <= MAX_FEATURES);
        assert_eq!(info.cache_bytes, 0.0);
        assert_eq!(parse_cpuinfo("cache size : lots\n\0\0"), CpuInfo::default());
    }

    #[test]
    fn this_machine_lists_features() {
        if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
            assert!(!parse_cpuinfo(&text).features.is_empty());
        }
    }
}
