//! global_prefs.xml and global_prefs_override.xml into [`Prefs`]: the work buffer of
//! seed 000/002 (min_queue, low and high water marks), the scheduling period of seed 000,
//! CPU, memory and disk limits (seed 004). The override file has the same format and is
//! applied on top, element by element, so only elements present change the preferences.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document};
use super::xml_write::XmlWriter;
use crate::model::{Prefs, ReportedPrefs};

const PERCENT: &str = "between 0 and 100";
const DAYS: &str = "between 0 and 10 days";
const MINUTES: &str = "between 0 and 100000 minutes";
const GIGABYTES: &str = "between 0 and 10^9 GB";
const CHECKPOINT_SECONDS: &str = "between 1 second and 1 day";
const HOURS: &str = "an hour of the day, between 0 and 24";
const RATE: &str = "between 0 and 10^12 bytes a second";
const MEGABYTES: &str = "between 0 and 10^12 MB";
const TEMPERATURE: &str = "between 0 and 200 degrees Celsius";

/// Applies the preferences in a global_prefs.xml-format text to `prefs`. Only elements
/// present change `prefs`; on error (the first bad element) `prefs` is left as it was.
/// `name` is the file name errors are reported under.
pub fn parse_global_prefs(text: &str, name: &str, prefs: &mut Prefs) -> Result<(), XmlError> {
    let mut updated = prefs.clone();
    let mut problems = read_global_prefs(text, name, &mut updated)?;
    if !problems.is_empty() {
        return Err(problems.swap_remove(0));
    }
    *prefs = updated;
    Ok(())
}

/// Applies the preferences in a global_prefs.xml-format text to `prefs` as the client
/// does: a text that is not XML or has no `<global_preferences>` is an error and changes
/// nothing; a bad element is one of the problems returned, and that preference keeps
/// its value while the good elements apply.
pub fn read_global_prefs(
    text: &str,
    name: &str,
    prefs: &mut Prefs,
) -> Result<Vec<XmlError>, XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    let element = preferences_element(&root).map_err(|e| e.in_file(name))?;
    let mut problems = Vec::new();
    for child in &element.children {
        if let Err(problem) = apply_preference(child, prefs) {
            problems.push(problem.in_file(name));
        }
    }
    Ok(problems)
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
/// `prefs`, stopping at the first bad element.
pub(crate) fn apply_prefs(root: &Element, prefs: &mut Prefs) -> Result<(), XmlError> {
    // Venue-specific `<venue>` sections and everything else unknown sit at the same level
    // and are skipped: only the top-level values apply.
    for child in &preferences_element(root)?.children {
        apply_preference(child, prefs)?;
    }
    Ok(())
}

/// One child of `<global_preferences>` into `prefs`; unknown ones (and `<venue>`) are
/// skipped.
fn apply_preference(child: &Element, prefs: &mut Prefs) -> Result<(), XmlError> {
    match child.name.as_str() {
        // A negative buffer would make the water marks cross; more than BOINC's 10 days
        // each is refused as a typo.
        "work_buf_min_days" => prefs.work_buf_min_days = child.f64_in(0.0, 10.0, DAYS)?,
        "work_buf_additional_days" => {
            prefs.work_buf_additional_days = child.f64_in(0.0, 10.0, DAYS)?
        }
        "cpu_scheduling_period_minutes" => {
            prefs.cpu_scheduling_period_minutes = child.f64_in(0.0, 100_000.0, MINUTES)?
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
        "idle_time_to_run" => prefs.idle_time_to_run = child.f64_in(0.0, 100_000.0, MINUTES)?,
        "disk_max_used_gb" => prefs.disk_max_used_gb = child.f64_in(0.0, 1e9, GIGABYTES)?,
        "disk_max_used_pct" => prefs.disk_max_used_pct = child.f64_in(0.0, 100.0, PERCENT)?,
        "disk_min_free_gb" => prefs.disk_min_free_gb = child.f64_in(0.0, 1e9, GIGABYTES)?,
        // Checkpoints more often than once a second would only wear the disk.
        "disk_interval" => prefs.disk_interval = child.f64_in(1.0, 86_400.0, CHECKPOINT_SECONDS)?,
        _ => apply_reported_preference(child, &mut prefs.reported)?,
    }
    Ok(())
}

/// One of the preferences kept only to be reported ([`ReportedPrefs`]); others are
/// skipped.
fn apply_reported_preference(child: &Element, prefs: &mut ReportedPrefs) -> Result<(), XmlError> {
    let hour = |child: &Element| child.f64_in(0.0, 24.0, HOURS);
    let rate = |child: &Element| child.f64_in(0.0, 1e12, RATE);
    match child.name.as_str() {
        "source_project" => prefs.source_project = child.string(),
        "mod_time" => prefs.mod_time = child.f64()?,
        "battery_charge_min_pct" => {
            prefs.battery_charge_min_pct = child.f64_in(0.0, 100.0, PERCENT)?
        }
        "battery_max_temperature" => {
            prefs.battery_max_temperature = child.f64_in(0.0, 200.0, TEMPERATURE)?
        }
        "suspend_if_no_recent_input" => {
            prefs.suspend_if_no_recent_input = child.f64_in(0.0, 100_000.0, MINUTES)?
        }
        "suspend_cpu_usage" => prefs.suspend_cpu_usage = child.f64_in(0.0, 100.0, PERCENT)?,
        "start_hour" => prefs.start_hour = hour(child)?,
        "end_hour" => prefs.end_hour = hour(child)?,
        "net_start_hour" => prefs.net_start_hour = hour(child)?,
        "net_end_hour" => prefs.net_end_hour = hour(child)?,
        "confirm_before_connecting" => prefs.confirm_before_connecting = child.flag()?,
        "hangup_if_dialed" => prefs.hangup_if_dialed = child.flag()?,
        "dont_verify_images" => prefs.dont_verify_images = child.flag()?,
        "vm_max_used_pct" => prefs.vm_max_used_pct = child.f64_in(0.0, 100.0, PERCENT)?,
        "max_bytes_sec_up" => prefs.max_bytes_sec_up = rate(child)?,
        "max_bytes_sec_down" => prefs.max_bytes_sec_down = rate(child)?,
        "daily_xfer_limit_mb" => prefs.daily_xfer_limit_mb = child.f64_in(0.0, 1e12, MEGABYTES)?,
        "daily_xfer_period_days" => prefs.daily_xfer_period_days = child.u32()?,
        "override_file_present" => prefs.override_file_present = child.flag()?,
        "network_wifi_only" => prefs.network_wifi_only = child.flag()?,
        _ => {}
    }
    Ok(())
}

/// Writes `prefs` as a `<global_preferences>` element, as a scheduler request's working
/// preferences carry them: every preference BOINC 7.20's client sends, in its order
/// (fixtures/boinc-7.20.5 sched_request_04), and `max_ncpus` when it is set.
pub(crate) fn write_prefs(prefs: &Prefs, writer: &mut XmlWriter) {
    let other = &prefs.reported;
    writer.open("global_preferences");
    writer.text("source_project", &other.source_project);
    writer.number("mod_time", other.mod_time);
    writer.number("battery_charge_min_pct", other.battery_charge_min_pct);
    writer.number("battery_max_temperature", other.battery_max_temperature);
    writer.flag("run_on_batteries", prefs.run_on_batteries);
    writer.flag("run_if_user_active", prefs.run_if_user_active);
    writer.flag("run_gpu_if_user_active", prefs.run_gpu_if_user_active);
    writer.number("suspend_if_no_recent_input", other.suspend_if_no_recent_input);
    writer.number("suspend_cpu_usage", other.suspend_cpu_usage);
    writer.number("start_hour", other.start_hour);
    writer.number("end_hour", other.end_hour);
    writer.number("net_start_hour", other.net_start_hour);
    writer.number("net_end_hour", other.net_end_hour);
    writer.flag("leave_apps_in_memory", prefs.leave_apps_in_memory);
    writer.flag("confirm_before_connecting", other.confirm_before_connecting);
    writer.flag("hangup_if_dialed", other.hangup_if_dialed);
    writer.flag("dont_verify_images", other.dont_verify_images);
    writer.number("work_buf_min_days", prefs.work_buf_min_days);
    writer.number("work_buf_additional_days", prefs.work_buf_additional_days);
    writer.number("max_ncpus_pct", prefs.max_ncpus_pct);
    if prefs.max_ncpus > 0 {
        writer.integer("max_ncpus", prefs.max_ncpus);
    }
    writer.number("cpu_scheduling_period_minutes", prefs.cpu_scheduling_period_minutes);
    writer.number("disk_interval", prefs.disk_interval);
    writer.number("disk_max_used_gb", prefs.disk_max_used_gb);
    writer.number("disk_max_used_pct", prefs.disk_max_used_pct);
    writer.number("disk_min_free_gb", prefs.disk_min_free_gb);
    writer.number("vm_max_used_pct", other.vm_max_used_pct);
    writer.number("ram_max_used_busy_pct", prefs.ram_max_used_busy_pct);
    writer.number("ram_max_used_idle_pct", prefs.ram_max_used_idle_pct);
    writer.number("idle_time_to_run", prefs.idle_time_to_run);
    writer.number("max_bytes_sec_up", other.max_bytes_sec_up);
    writer.number("max_bytes_sec_down", other.max_bytes_sec_down);
    writer.number("cpu_usage_limit", prefs.cpu_usage_limit);
    writer.number("daily_xfer_limit_mb", other.daily_xfer_limit_mb);
    writer.integer("daily_xfer_period_days", other.daily_xfer_period_days);
    writer.flag("override_file_present", other.override_file_present);
    writer.flag("network_wifi_only", other.network_wifi_only);
    writer.close("global_preferences");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checkpoint_interval_is_read_bounded_and_written() {
        let mut prefs = Prefs::default();
        parse_global_prefs(
            "<global_preferences><disk_interval>5</disk_interval></global_preferences>",
            "global_prefs_override.xml",
            &mut prefs,
        )
        .expect("valid");
        assert_eq!(prefs.disk_interval, 5.0);
        for bad in ["0", "-3", "1e12", "nan"] {
            let text = format!(
                "<global_preferences><disk_interval>{bad}</disk_interval></global_preferences>"
            );
            assert!(parse_global_prefs(&text, "p.xml", &mut prefs).is_err(), "{bad}");
        }
        let mut writer = XmlWriter::new();
        write_prefs(&prefs, &mut writer);
        assert!(writer.finish().contains("<disk_interval>5.000000</disk_interval>"));
        // BOINC's client sends it always.
        let mut writer = XmlWriter::new();
        write_prefs(&Prefs::default(), &mut writer);
        assert!(writer.finish().contains("<disk_interval>60.000000</disk_interval>"));
    }

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
    fn each_bad_element_is_a_problem_and_the_good_ones_apply() {
        let mut prefs = Prefs::default();
        let problems = read_global_prefs(
            "<global_preferences>\n<work_buf_min_days>1e308</work_buf_min_days>\n\
             <cpu_usage_limit>-3</cpu_usage_limit>\n<run_on_batteries>1</run_on_batteries>\n\
             <disk_max_used_gb>inf</disk_max_used_gb>\n<max_ncpus>-2</max_ncpus>\n\
             </global_preferences>",
            "global_prefs_override.xml",
            &mut prefs,
        )
        .expect("preferences");
        let lines: Vec<usize> = problems.iter().map(|p| p.line).collect();
        assert_eq!(lines, vec![2, 3, 5, 6]);
        assert!(prefs.run_on_batteries);
        assert_eq!(Prefs { run_on_batteries: false, ..prefs }, Prefs::default());
        let mut unchanged = Prefs::default();
        assert!(read_global_prefs("<cc_config/>", "x.xml", &mut unchanged).is_err());
        assert!(read_global_prefs("<global_preferences>", "x.xml", &mut unchanged).is_err());
        assert_eq!(unchanged, Prefs::default());
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
