//! What `/proc/cpuinfo` adds to sysinfo's view of the processor: its feature flags
//! (`<p_features>`), its cache (`<m_cache>`) and its model with family, model number
//! and stepping (`<p_model>`), as the real client reports them.

/// The longest feature list kept, bytes (a modern x86 CPU lists about 1,500).
const MAX_FEATURES: usize = 8192;

/// The processor's features and cache, from the first processor's lines.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct CpuInfo {
    /// Feature flags, space-separated (x86 `flags`, ARM `Features`).
    pub(crate) features: String,
    /// Cache size, bytes (x86 `cache size`); 0 when not listed.
    pub(crate) cache_bytes: f64,
    /// The first processor's `model name`.
    pub(crate) model_name: String,
    /// Its `cpu family` (x86).
    pub(crate) family: String,
    /// Its `model` number (x86).
    pub(crate) model: String,
    /// Its `stepping` (x86).
    pub(crate) stepping: String,
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
            "model name" if info.model_name.is_empty() => info.model_name = bounded(value),
            "cpu family" if info.family.is_empty() => info.family = bounded(value),
            "model" if info.model.is_empty() => info.model = bounded(value),
            "stepping" if info.stepping.is_empty() => info.stepping = bounded(value),
            _ => {}
        }
    }
    info
}

/// The model as BOINC's client reports it on Linux: the model name, and on x86 its
/// family, model and stepping (`Intel(R) Xeon(R) Processor [Family 6 Model 207
/// Stepping 2]`); `fallback` (sysinfo's brand) where /proc/cpuinfo names no model.
pub(crate) fn boinc_model(info: &CpuInfo, fallback: &str) -> String {
    let name = if info.model_name.is_empty() { fallback.trim() } else { &info.model_name };
    if info.family.is_empty() || info.model.is_empty() || info.stepping.is_empty() {
        return name.to_string();
    }
    format!("{name} [Family {} Model {} Stepping {}]", info.family, info.model, info.stepping)
}

/// A short field's value, cut to a bound at a character boundary.
fn bounded(value: &str) -> String {
    const MAX_FIELD: usize = 256;
    let mut end = value.len().min(MAX_FIELD);
    while !value.is_char_boundary(end) {
        end -= 1;
    }
    value[..end].to_string()
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
        assert_eq!(
            arm,
            CpuInfo {
                features: "fp asimd evtstrm aes".into(),
                cache_bytes: 0.0,
                ..CpuInfo::default()
            }
        );
    }

    #[test]
    fn the_model_is_written_as_boinc_writes_it() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 207\n\
                    model name\t: Intel(R) Xeon(R) Processor\nstepping\t: 2\n\n\
                    processor\t: 1\nmodel name\t: other\n";
        let info = parse_cpuinfo(text);
        assert_eq!(
            boinc_model(&info, "brand"),
            "Intel(R) Xeon(R) Processor [Family 6 Model 207 Stepping 2]"
        );
        // No x86 figures (an ARM host): the name alone; no name: the fallback.
        let arm = parse_cpuinfo("model name\t: ARMv8 Processor rev 1 (v8l)\n");
        assert_eq!(boinc_model(&arm, "brand"), "ARMv8 Processor rev 1 (v8l)");
        assert_eq!(boinc_model(&CpuInfo::default(), " brand "), "brand");
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
