//! cc_config.xml into [`CcConfig`]: the `<options>` that change scheduling (the CPU count
//! the policies of seed 000 schedule onto, whether and which GPUs count as processing
//! resources in seed 003, reporting and fetch behaviour of seed 002), transfers, the
//! proxy (`<proxy_info>`), the programs that stop computing, the client's start and exit, the apps' CPU priority,
//! and the `<log_flags>` turned on and off. Every value is bounded; a bad element is a
//! problem of its own, reported with its line, and leaves that option at its default
//! ([`read_cc_config`]), or fails the whole file ([`parse_cc_config`]). An element
//! boinc-rs does not support is named as a problem too (BOINC's "unrecognized tag"), so
//! the user learns that it has no effect; it alone fails no file.

use super::error::{XmlError, XmlProblem};
use super::proxy_info::read_proxy_info;
use super::values::quoted_value;
use super::xml_tree::{Element, parse_document};
use crate::model::log_flags::log_flag;
use crate::model::{CcConfig, DEFAULT_MAX_STDOUT_FILE_SIZE, GpuExclusion, ResourceType};

/// The most CPUs `<ncpus>` may claim.
const MAX_NCPUS: u32 = 4096;
/// The most entries kept of each list (`<exclude_gpu>`, `<exclusive_app>`, log flags).
const MAX_LIST: usize = 256;
/// The longest a transfer may stall before it is retried, seconds (a day).
const MAX_TRANSFER_TIMEOUT: f64 = 86_400.0;
/// The longest `<start_delay>`, seconds (a day).
const MAX_START_DELAY: f64 = 86_400.0;

/// Reads a cc_config.xml, stopping at its first bad element (an unsupported one is
/// skipped). `name` is the file name errors are reported under.
pub fn parse_cc_config(text: &str, name: &str) -> Result<CcConfig, XmlError> {
    let (config, problems) = read_cc_config(text, name)?;
    match problems.into_iter().find(|p| p.problem != XmlProblem::Unrecognized) {
        None => Ok(config),
        Some(problem) => Err(problem),
    }
}

/// Reads a cc_config.xml as the client does: a file that is not XML or not a
/// `<cc_config>` is an error; a bad element is one of the problems returned beside the
/// configuration, and its option keeps its default.
pub fn read_cc_config(text: &str, name: &str) -> Result<(CcConfig, Vec<XmlError>), XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    if root.name != "cc_config" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "cc_config" }).in_file(name));
    }
    let mut config = CcConfig::default();
    let mut problems = Vec::new();
    for section in &root.children {
        match section.name.as_str() {
            "options" => {
                for child in &section.children {
                    if let Err(problem) = apply_option(child, &mut config) {
                        problems.push(problem.in_file(name));
                    }
                }
            }
            "log_flags" => {
                for flag in &section.children {
                    if log_flag(&flag.name).is_none() {
                        problems.push(flag.error(XmlProblem::Unrecognized).in_file(name));
                        continue;
                    }
                    match flag.flag() {
                        Ok(true) if config.log_flags.len() < MAX_LIST => {
                            config.log_flags.push(flag.name.clone())
                        }
                        Ok(false) if config.log_flags_off.len() < MAX_LIST => {
                            config.log_flags_off.push(flag.name.clone())
                        }
                        Ok(_) => {}
                        Err(problem) => problems.push(problem.in_file(name)),
                    }
                }
            }
            _ => problems.push(section.error(XmlProblem::Unrecognized).in_file(name)),
        }
    }
    Ok((config, problems))
}

/// One `<options>` child into `config`; an option boinc-rs does not support is a
/// problem (it changes nothing).
fn apply_option(child: &Element, config: &mut CcConfig) -> Result<(), XmlError> {
    match child.name.as_str() {
        // BOINC's -1 (and any negative count) means "use the hardware count".
        "ncpus" => {
            config.ncpus = match child.i64()? {
                n if n < 0 => None,
                _ => Some(child.u32_in(0, MAX_NCPUS, "between -1 and 4096")?),
            }
        }
        "no_gpus" => config.no_gpus = child.flag()?,
        "proxy_info" => *config.proxy = read_proxy_info(child)?,
        "use_all_gpus" => config.use_all_gpus = child.flag()?,
        "report_results_immediately" => config.report_results_immediately = child.flag()?,
        "fetch_minimal_work" => config.fetch_minimal_work = child.flag()?,
        "no_info_fetch" => config.no_info_fetch = child.flag()?,
        "allow_remote_gui_rpc" => config.allow_remote_gui_rpc = child.flag()?,
        "max_file_xfers" => {
            config.max_file_xfers = child.u32_in(1, 1000, "between 1 and 1000")?;
        }
        "max_file_xfers_per_project" => {
            config.max_file_xfers_per_project = child.u32_in(1, 1000, "between 1 and 1000")?;
        }
        "http_transfer_timeout" => {
            config.http_transfer_timeout =
                child.f64_in(1.0, MAX_TRANSFER_TIMEOUT, "between 1 and 86400 seconds")?;
        }
        "max_stdout_file_size" => {
            // BOINC reads it as a number of bytes and takes 0 for its default.
            let bytes = child.f64_in(0.0, 1e12, "between 0 and 10^12 bytes")?;
            config.max_stdout_file_size =
                if bytes < 1.0 { DEFAULT_MAX_STDOUT_FILE_SIZE } else { bytes as u64 };
        }
        "http_transfer_timeout_bps" => {
            config.http_transfer_timeout_bps =
                child.f64_in(0.0, 1e12, "between 0 and 10^12 bytes per second")?;
        }
        "ignore_nvidia_dev" => {
            let device = child.u32_in(0, 1023, "a device number between 0 and 1023")?;
            push_bounded(child, "ignore_nvidia_dev", &mut config.ignore_nvidia_dev, device)?;
        }
        "ignore_ati_dev" => {
            let device = child.u32_in(0, 1023, "a device number between 0 and 1023")?;
            push_bounded(child, "ignore_ati_dev", &mut config.ignore_ati_dev, device)?;
        }
        "ignore_intel_dev" => {
            let device = child.u32_in(0, 1023, "a device number between 0 and 1023")?;
            push_bounded(child, "ignore_intel_dev", &mut config.ignore_intel_dev, device)?;
        }
        "abort_jobs_on_exit" => config.abort_jobs_on_exit = child.flag()?,
        "allow_multiple_clients" => config.allow_multiple_clients = child.flag()?,
        "dont_check_file_sizes" => config.dont_check_file_sizes = child.flag()?,
        "start_delay" => {
            config.start_delay =
                child.f64_in(0.0, MAX_START_DELAY, "between 0 and 86400 seconds")?;
        }
        "process_priority" => config.process_priority = priority(child)?,
        "process_priority_special" => config.process_priority_special = priority(child)?,
        "exclude_gpu" => {
            let exclusion = gpu_exclusion(child)?;
            push_bounded(child, "exclude_gpu", &mut config.exclude_gpus, exclusion)?;
        }
        "exclusive_app" => {
            let app = program_name(child)?;
            push_bounded(child, "exclusive_app", &mut config.exclusive_apps, app)?;
        }
        "exclusive_gpu_app" => {
            let app = program_name(child)?;
            push_bounded(child, "exclusive_gpu_app", &mut config.exclusive_gpu_apps, app)?;
        }
        _ => return Err(child.error(XmlProblem::Unrecognized)),
    }
    Ok(())
}

/// A `<process_priority>`: BOINC's -1 is its default (`None`), 0 to 5 its levels.
fn priority(element: &Element) -> Result<Option<u8>, XmlError> {
    match element.i64()? {
        -1 => Ok(None),
        level => match u8::try_from(level) {
            Ok(level) if level <= 5 => Ok(Some(level)),
            _ => Err(element.error(XmlProblem::OutOfRange {
                value: level.to_string(),
                expected: "-1 (default) or 0 (lowest) to 5 (realtime)",
            })),
        },
    }
}

/// Adds to a list of at most [`MAX_LIST`] entries.
fn push_bounded<T: PartialEq>(
    child: &Element,
    element: &'static str,
    list: &mut Vec<T>,
    value: T,
) -> Result<(), XmlError> {
    if list.len() >= MAX_LIST {
        return Err(child.error(XmlProblem::TooMany { element, limit: MAX_LIST }));
    }
    if !list.contains(&value) {
        list.push(value);
    }
    Ok(())
}

/// An `<exclusive_app>` or `<exclusive_gpu_app>`: a program's file name, as the
/// process list shows it.
fn program_name(child: &Element) -> Result<String, XmlError> {
    let app = child.string();
    if app.is_empty() || app.len() > 256 || app.contains('/') {
        return Err(child.error(XmlProblem::OutOfRange {
            value: quoted_value(&app),
            expected: "a program's file name (no '/'), up to 256 bytes",
        }));
    }
    Ok(app)
}

/// `<exclude_gpu><url>..</url>[<device_num>N</device_num>][<type>..</type>][<app>..</app>]`.
fn gpu_exclusion(element: &Element) -> Result<GpuExclusion, XmlError> {
    let url = element.required_text("url")?.to_string();
    let device_num = match element.child("device_num") {
        Some(device) => Some(device.u32_in(0, 1023, "a device number between 0 and 1023")?),
        None => None,
    };
    let resource = match element.child("type") {
        Some(kind) => match ResourceType::from_boinc_name(kind.trimmed()) {
            Some(gpu) if gpu.is_gpu() => Some(gpu),
            _ => {
                return Err(kind.error(XmlProblem::OutOfRange {
                    value: quoted_value(kind.trimmed()),
                    expected: "NVIDIA, ATI or intel_gpu",
                }));
            }
        },
        None => None,
    };
    let app = element.child("app").map(Element::string).filter(|a| !a.is_empty());
    Ok(GpuExclusion { url, device_num, resource, app })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let config = parse_cc_config(
            "<cc_config><log_flags><task>1</task><sched_op_debug/><cpu_sched>0</cpu_sched>\
             </log_flags><options>\
             <ncpus>6</ncpus><no_gpus>1</no_gpus><fetch_minimal_work/>\
             <allow_remote_gui_rpc>1</allow_remote_gui_rpc><use_all_gpus/>\
             <max_file_xfers>4</max_file_xfers><max_file_xfers_per_project>1</max_file_xfers_per_project>\
             <http_transfer_timeout>120</http_transfer_timeout>\
             <http_transfer_timeout_bps>100</http_transfer_timeout_bps>\
             <ignore_nvidia_dev>1</ignore_nvidia_dev>\
             <exclude_gpu><url>http://p/</url><device_num>0</device_num><type>NVIDIA</type>\
             <app>astro</app></exclude_gpu><exclude_gpu><url>http://q/</url></exclude_gpu>\
             <exclusive_app>game.exe</exclusive_app><exclusive_app>blender</exclusive_app>\
             <exclusive_gpu_app>darktable</exclusive_gpu_app>\
             <report_results_immediately>0</report_results_immediately></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!(config.ncpus, Some(6));
        assert!(config.no_gpus && config.fetch_minimal_work && !config.report_results_immediately);
        assert!(config.allow_remote_gui_rpc && config.use_all_gpus);
        assert_eq!((config.max_file_xfers, config.max_file_xfers_per_project), (4, 1));
        assert_eq!(
            (config.http_transfer_timeout, config.http_transfer_timeout_bps),
            (120.0, 100.0)
        );
        assert_eq!(config.ignore_nvidia_dev, vec![1]);
        assert_eq!(config.log_flags, vec!["task".to_string(), "sched_op_debug".to_string()]);
        assert_eq!(config.exclusive_apps, vec!["game.exe".to_string(), "blender".to_string()]);
        assert_eq!(config.exclusive_gpu_apps, vec!["darktable".to_string()]);
        assert_eq!(
            config.exclude_gpus,
            vec![
                GpuExclusion {
                    url: "http://p/".into(),
                    device_num: Some(0),
                    resource: Some(ResourceType::Nvidia),
                    app: Some("astro".into()),
                },
                GpuExclusion {
                    url: "http://q/".into(),
                    device_num: None,
                    resource: None,
                    app: None
                },
            ]
        );
        let config = parse_cc_config(
            "<cc_config><options><ncpus>-1</ncpus></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!(config.ncpus, None);
        assert_eq!(config.max_file_xfers, 8, "BOINC's default");
    }

    #[test]
    fn client_options() {
        let (config, problems) = read_cc_config(
            "<cc_config><options>\
             <ignore_ati_dev>0</ignore_ati_dev><ignore_intel_dev>2</ignore_intel_dev>\
             <abort_jobs_on_exit>1</abort_jobs_on_exit><allow_multiple_clients/>\
             <dont_check_file_sizes>1</dont_check_file_sizes><start_delay>30</start_delay>\
             <process_priority>2</process_priority>\
             <process_priority_special>-1</process_priority_special>\
             </options><log_flags><task>0</task></log_flags></cc_config>",
            "cc_config.xml",
        )
        .expect("a cc_config");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!((config.ignore_ati_dev, config.ignore_intel_dev), (vec![0], vec![2]));
        assert!(config.abort_jobs_on_exit && config.allow_multiple_clients);
        assert!(config.dont_check_file_sizes);
        assert_eq!(config.start_delay, 30.0);
        assert_eq!((config.process_priority, config.process_priority_special), (Some(2), None));
        assert_eq!(config.log_flags_off, vec!["task".to_string()]);
        let defaults = CcConfig::default();
        assert!(!defaults.abort_jobs_on_exit && !defaults.allow_multiple_clients);
        assert_eq!((defaults.start_delay, defaults.process_priority), (0.0, None));
    }

    #[test]
    fn each_unsupported_element_is_named_once_and_fails_no_file() {
        let text = "<cc_config>\n<options>\n<save_stats_days>30</save_stats_days>\n\
                    <no_gpus>1</no_gpus>\n<nocpus/>\n</options>\n<log_flags>\n\
                    <task_debug>1</task_debug>\n<tsak>1</tsak>\n</log_flags>\n\
                    <extras/>\n</cc_config>";
        let (config, problems) = read_cc_config(text, "cc_config.xml").expect("a cc_config");
        let named: Vec<(usize, Option<&str>)> =
            problems.iter().map(|p| (p.line, p.element.as_deref())).collect();
        assert_eq!(
            named,
            vec![
                (3, Some("save_stats_days")),
                (5, Some("nocpus")),
                (9, Some("tsak")),
                (11, Some("extras"))
            ]
        );
        assert_eq!(
            problems[0].to_string(),
            "cc_config.xml line 3, element <save_stats_days>: unrecognized tag: boinc-rs does \
             not support it, so it has no effect; check its spelling or remove it"
        );
        assert!(config.no_gpus && config.log_flags == vec!["task_debug".to_string()]);
        assert!(parse_cc_config(text, "cc_config.xml").is_ok(), "unsupported is not invalid");
        for bad in ["<process_priority>6</process_priority>", "<start_delay>-1</start_delay>"] {
            let text = format!("<cc_config><options>{bad}</options></cc_config>");
            assert!(parse_cc_config(&text, "cc_config.xml").is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_flag_names_line() {
        let error = parse_cc_config(
            "<cc_config>\n<options>\n<no_gpus>maybe</no_gpus>\n</options>\n</cc_config>",
            "cc_config.xml",
        )
        .expect_err("bad flag");
        assert_eq!(
            error.to_string(),
            "cc_config.xml line 3, element <no_gpus>: expected a flag (empty, 0 or 1), found \
             \"maybe\"; fix or remove the element"
        );
    }

    #[test]
    fn each_bad_element_is_a_problem_of_its_own_and_the_rest_applies() {
        let (config, problems) = read_cc_config(
            "<cc_config>\n<options>\n<ncpus>99999</ncpus>\n<max_file_xfers>0</max_file_xfers>\n\
             <http_transfer_timeout>nan</http_transfer_timeout>\n\
             <exclude_gpu><device_num>1</device_num></exclude_gpu>\n\
             <exclude_gpu><url>u</url><type>TPU</type></exclude_gpu>\n\
             <exclusive_app>../../bin/sh</exclusive_app>\n\
             <report_results_immediately/>\n</options>\n\
             <log_flags><task>sometimes</task></log_flags></cc_config>",
            "cc_config.xml",
        )
        .expect("a cc_config");
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6, 7, 8, 11], "{problems:?}");
        assert!(problems.iter().all(|p| p.file == "cc_config.xml"));
        assert!(config.report_results_immediately, "the good element still applies");
        assert_eq!(config.ncpus, None);
        assert_eq!(config.max_file_xfers, 8);
        assert!(config.exclude_gpus.is_empty() && config.exclusive_apps.is_empty());
    }

    #[test]
    fn lists_are_bounded() {
        let apps: String =
            (0..1000).map(|i| format!("<exclusive_app>app{i}</exclusive_app>")).collect();
        let (config, problems) = read_cc_config(
            &format!("<cc_config><options>{apps}</options></cc_config>"),
            "cc_config.xml",
        )
        .expect("a cc_config");
        assert_eq!(config.exclusive_apps.len(), MAX_LIST);
        assert_eq!(problems.len(), 1000 - MAX_LIST);
    }

    #[test]
    fn not_a_cc_config_is_an_error() {
        for text in ["", "<cc_config>", "<global_preferences/>", "\0\u{1}"] {
            assert!(read_cc_config(text, "cc_config.xml").is_err(), "{text:?}");
        }
    }

    #[test]
    fn the_real_clients_file_reads() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/boinc-7.20.5/state/cc_config.xml"
        ))
        .expect("the fixture");
        let (config, problems) = read_cc_config(&text, "cc_config.xml").expect("reads");
        assert!(problems.is_empty(), "{problems:?}");
        assert!(config.no_gpus);
        assert_eq!(config.log_flags.len(), 4, "the flags set to 1");
    }
}
