//! global_prefs.xml and global_prefs_override.xml into [`Prefs`]: the work buffer of
//! seed 000/002 (min_queue, low and high water marks), the scheduling period of seed 000,
//! CPU, memory and disk limits (seed 004). The override file has the same format and is
//! applied on top, element by element, so only elements present change the preferences.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document};
use super::xml_write::XmlWriter;
use crate::model::Prefs;

const PERCENT: &str = "between 0 and 100";

/// Applies the preferences in a global_prefs.xml-format text to `prefs`. Only elements
/// present change `prefs`; on error `prefs` is left as it was. `name` is the file name
/// errors are reported under.
pub fn parse_global_prefs(text: &str, name: &str, prefs: &mut Prefs) -> Result<(), XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    let mut updated = prefs.clone();
    apply_prefs(&root, &mut updated).map_err(|e| e.in_file(name))?;
    *prefs = updated;
    Ok(())
}

/// The `<global_preferences>` element: the root, or (as in a project's account file) a
/// child of it.
fn preferences_element(root: &Element) -> Result<&Element, XmlError> {
    const NAME: &str = "global_preferences";
    if root.name == NAME {
        return Ok(root);
    }
    root.child(NAME).ok_or_else(|| root.error(XmlProblem::WrongRoot { expected: NAME }))
}

/// Applies the `<global_preferences>` in `root` (the element itself or its parent) to
/// `prefs`.
pub(crate) fn apply_prefs(root: &Element, prefs: &mut Prefs) -> Result<(), XmlError> {
    // Venue-specific `<venue>` sections and everything else unknown sit at the same level
    // and are skipped: only the top-level values apply.
    for child in &preferences_element(root)?.children {
        match child.name.as_str() {
            // A negative buffer would make the water marks cross.
            "work_buf_min_days" => prefs.work_buf_min_days = child.non_negative_f64()?,
            "work_buf_additional_days" => {
                prefs.work_buf_additional_days = child.non_negative_f64()?
            }
            "cpu_scheduling_period_minutes" => {
                prefs.cpu_scheduling_period_minutes = child.non_negative_f64()?
            }
            "max_ncpus_pct" => prefs.max_ncpus_pct = child.f64_in(0.0, 100.0, PERCENT)?,
            // `max_cpus` is the older name of the same limit.
            "max_ncpus" | "max_cpus" => prefs.max_ncpus = child.u32()?,
            "leave_apps_in_memory" => prefs.leave_apps_in_memory = child.flag()?,
            "ram_max_used_busy_pct" => {
                prefs.ram_max_used_busy_pct = child.f64_in(0.0, 100.0, PERCENT)?
            }
            "ram_max_used_idle_pct" => {
                prefs.ram_max_used_idle_pct = child.f64_in(0.0, 100.0, PERCENT)?
            }
            "cpu_usage_limit" => prefs.cpu_usage_limit = child.f64_in(0.0, 100.0, PERCENT)?,
            "run_if_user_active" => prefs.run_if_user_active = child.flag()?,
            "run_gpu_if_user_active" => prefs.run_gpu_if_user_active = child.flag()?,
            "run_on_batteries" => prefs.run_on_batteries = child.flag()?,
            "idle_time_to_run" => prefs.idle_time_to_run = child.non_negative_f64()?,
            "disk_max_used_gb" => prefs.disk_max_used_gb = child.non_negative_f64()?,
            "disk_max_used_pct" => prefs.disk_max_used_pct = child.f64_in(0.0, 100.0, PERCENT)?,
            "disk_min_free_gb" => prefs.disk_min_free_gb = child.non_negative_f64()?,
            _ => {}
        }
    }
    Ok(())
}

/// Writes `prefs` as a `<global_preferences>` element, every value the model holds, as
/// a scheduler request's working preferences carry them.
pub(crate) fn write_prefs(prefs: &Prefs, writer: &mut XmlWriter) {
    writer.open("global_preferences");
    writer.flag("run_if_user_active", prefs.run_if_user_active);
    writer.flag("run_gpu_if_user_active", prefs.run_gpu_if_user_active);
    writer.flag("run_on_batteries", prefs.run_on_batteries);
    writer.number("idle_time_to_run", prefs.idle_time_to_run);
    writer.flag("leave_apps_in_memory", prefs.leave_apps_in_memory);
    writer.number("work_buf_min_days", prefs.work_buf_min_days);
    writer.number("work_buf_additional_days", prefs.work_buf_additional_days);
    writer.number("max_ncpus_pct", prefs.max_ncpus_pct);
    if prefs.max_ncpus > 0 {
        writer.integer("max_ncpus", prefs.max_ncpus);
    }
    writer.number("cpu_scheduling_period_minutes", prefs.cpu_scheduling_period_minutes);
    writer.number("disk_max_used_gb", prefs.disk_max_used_gb);
    writer.number("disk_max_used_pct", prefs.disk_max_used_pct);
    writer.number("disk_min_free_gb", prefs.disk_min_free_gb);
    writer.number("ram_max_used_busy_pct", prefs.ram_max_used_busy_pct);
    writer.number("ram_max_used_idle_pct", prefs.ram_max_used_idle_pct);
    writer.number("cpu_usage_limit", prefs.cpu_usage_limit);
    writer.close("global_preferences");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_present_elements_change() {
        let mut prefs = Prefs { work_buf_min_days: 2.0, ..Prefs::default() };
        parse_global_prefs(
            "<global_preferences>\n<work_buf_additional_days>0.25</work_buf_additional_days>\n\
             <run_gpu_if_user_active/><max_cpus>3</max_cpus>\
             <venue name=\"home\"><work_buf_min_days>9</work_buf_min_days></venue>\
             </global_preferences>",
            "global_prefs.xml",
            &mut prefs,
        )
        .expect("valid");
        assert_eq!(prefs.work_buf_min_days, 2.0);
        assert_eq!(prefs.work_buf_additional_days, 0.25);
        assert!(prefs.run_gpu_if_user_active);
        assert_eq!(prefs.max_ncpus, 3);
    }

    #[test]
    fn bad_value_leaves_prefs_unchanged() {
        let mut prefs = Prefs::default();
        let error = parse_global_prefs(
            "<global_preferences>\n<max_ncpus_pct>50</max_ncpus_pct>\n\
             <work_buf_min_days>-1</work_buf_min_days>\n</global_preferences>",
            "global_prefs_override.xml",
            &mut prefs,
        )
        .expect_err("negative buffer");
        assert_eq!(error.line, 3);
        assert_eq!(error.element.as_deref(), Some("work_buf_min_days"));
        assert_eq!(error.file, "global_prefs_override.xml");
        assert_eq!(prefs, Prefs::default());
    }

    #[test]
    fn preferences_inside_another_root() {
        let mut prefs = Prefs::default();
        parse_global_prefs(
            "<account><global_preferences><cpu_usage_limit>50</cpu_usage_limit></global_preferences></account>",
            "account.xml",
            &mut prefs,
        )
        .expect("nested");
        assert_eq!(prefs.cpu_usage_limit, 50.0);
        let error = parse_global_prefs("<cc_config/>", "x.xml", &mut prefs).expect_err("root");
        assert_eq!(error.problem, XmlProblem::WrongRoot { expected: "global_preferences" });
    }
}
