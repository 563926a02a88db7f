//! cc_config.xml into [`CcConfig`]: the `<options>` that change scheduling (the CPU count
//! the policies of seed 000 schedule onto, whether GPUs count as processing resources in
//! seed 003, reporting and fetch behaviour of seed 002). `<log_flags>` and the many other
//! options are ignored.

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
                _ => {}
            }
        }
    }
    Ok(config)
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
