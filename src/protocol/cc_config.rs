//! cc_config.xml into [`CcConfig`]: the `<options>` that change scheduling (the CPU count
//! the policies of seed 000 schedule onto, whether GPUs count as processing resources in
//! seed 003, reporting and fetch behaviour of seed 002) and file transfers (how many at
//! once, the HTTP stall timeout). `<log_flags>` and the many other options are ignored.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document};
use crate::model::CcConfig;

/// Reads a cc_config.xml. `name` is the file name errors are reported under.
pub fn parse_cc_config(text: &str, name: &str) -> Result<CcConfig, XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    build_cc_config(&root).map_err(|e| e.in_file(name))
}

fn build_cc_config(root: &Element) -> Result<CcConfig, XmlError> {
    if root.name != "cc_config" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "cc_config" }));
    }
    let mut config = CcConfig::default();
    for options in root.children.iter().filter(|c| c.name == "options") {
        for child in &options.children {
            match child.name.as_str() {
                // BOINC's -1 (and any negative count) means "use the hardware count".
                "ncpus" => config.ncpus = u32::try_from(child.i64()?).ok(),
                "no_gpus" => config.no_gpus = child.flag()?,
                "report_results_immediately" => config.report_results_immediately = child.flag()?,
                "fetch_minimal_work" => config.fetch_minimal_work = child.flag()?,
                "no_info_fetch" => config.no_info_fetch = child.flag()?,
                "allow_remote_gui_rpc" => config.allow_remote_gui_rpc = child.flag()?,
                // BOINC treats a count below one as no transfers at all, which would
                // leave jobs waiting for ever: at least one is allowed.
                "max_file_xfers" => config.max_file_xfers = positive_count(child)?,
                "max_file_xfers_per_project" => {
                    config.max_file_xfers_per_project = positive_count(child)?;
                }
                "http_transfer_timeout" => {
                    config.http_transfer_timeout = positive_seconds(child)?;
                }
                "http_transfer_timeout_bps" => {
                    config.http_transfer_timeout_bps = child.f64()?.max(0.0);
                }
                _ => {}
            }
        }
    }
    Ok(config)
}

/// A count of at least one (a larger one than any host could use is cut to a million).
fn positive_count(element: &Element) -> Result<u32, XmlError> {
    Ok(element.i64()?.clamp(1, 1_000_000) as u32)
}

/// A duration of at least a second (BOINC's timeouts are whole seconds).
fn positive_seconds(element: &Element) -> Result<f64, XmlError> {
    let seconds = element.f64()?;
    Ok(if seconds.is_finite() { seconds.max(1.0) } else { CcConfig::HTTP_TRANSFER_TIMEOUT })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options() {
        let config = parse_cc_config(
            "<cc_config><log_flags><task>1</task></log_flags><options>\
             <ncpus>6</ncpus><no_gpus>1</no_gpus><fetch_minimal_work/>\
             <allow_remote_gui_rpc>1</allow_remote_gui_rpc>\
             <report_results_immediately>0</report_results_immediately></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!(config.ncpus, Some(6));
        assert!(config.no_gpus && config.fetch_minimal_work && !config.report_results_immediately);
        assert!(config.allow_remote_gui_rpc);
        let config = parse_cc_config(
            "<cc_config><options><ncpus>-1</ncpus></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!(config.ncpus, None);
        assert_eq!(
            (config.max_file_xfers, config.max_file_xfers_per_project),
            (CcConfig::MAX_FILE_XFERS, CcConfig::MAX_FILE_XFERS_PER_PROJECT)
        );
        assert_eq!(config.http_transfer_timeout, CcConfig::HTTP_TRANSFER_TIMEOUT);
    }

    #[test]
    fn transfer_options() {
        let config = parse_cc_config(
            "<cc_config><options><max_file_xfers>3</max_file_xfers>\
             <max_file_xfers_per_project>1</max_file_xfers_per_project>\
             <http_transfer_timeout>20</http_transfer_timeout>\
             <http_transfer_timeout_bps>500.5</http_transfer_timeout_bps></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!((config.max_file_xfers, config.max_file_xfers_per_project), (3, 1));
        assert_eq!((config.http_transfer_timeout, config.http_transfer_timeout_bps), (20.0, 500.5));
        // Zero or negative counts would stop every transfer; a zero timeout would fail
        // every exchange at once.
        let config = parse_cc_config(
            "<cc_config><options><max_file_xfers>0</max_file_xfers>\
             <max_file_xfers_per_project>-4</max_file_xfers_per_project>\
             <http_transfer_timeout>0</http_transfer_timeout>\
             <http_transfer_timeout_bps>-1</http_transfer_timeout_bps></options></cc_config>",
            "cc_config.xml",
        )
        .expect("valid");
        assert_eq!((config.max_file_xfers, config.max_file_xfers_per_project), (1, 1));
        assert_eq!((config.http_transfer_timeout, config.http_transfer_timeout_bps), (1.0, 0.0));
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
}
