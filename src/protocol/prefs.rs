//! global_prefs.xml and global_prefs_override.xml into [`Prefs`]: the work buffer of
//! seed 000/002 (min_queue, low and high water marks), the scheduling period of seed 000,
//! CPU, memory and disk limits (seed 004). The override file has the same format and is
//! applied on top, element by element, so only elements present change the preferences.
//!
//! A project's web preferences (a scheduler reply's `<global_preferences>`) may hold
//! `<venue name="home">` sections: as in BOINC, the section named by the host's venue
//! takes the place of the general values, and without one the general values apply.
//! [`web_prefs_mod_time`] reads when a set was last changed: the newest set wins.

use super::error::{XmlError, XmlProblem};
use super::xml_tree::{Element, parse_document, raw_content};
use super::xml_write::XmlWriter;
use crate::model::{DayPrefs, Prefs, ReportedPrefs, TimeWindow};

const PERCENT: &str = "between 0 and 100";
const DAYS: &str = "between 0 and 10 days";
const MINUTES: &str = "between 0 and 100000 minutes";
const GIGABYTES: &str = "between 0 and 10^9 GB";
const CHECKPOINT_SECONDS: &str = "between 1 second and 1 day";
const HOURS: &str = "an hour of the day, between 0 and 24";
const RATE: &str = "between 0 and 10^12 bytes a second";
const MEGABYTES: &str = "between 0 and 10^12 MB";
const TEMPERATURE: &str = "between 0 and 200 degrees Celsius";
const WEEKDAY: &str = "a day of the week, 0 (Sunday) to 6";

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
    read_global_prefs_in_venue(text, name, "", prefs)
}

/// [`read_global_prefs`] for a host in `venue` (a project's `<host_venue>`; empty: none):
/// a `<venue name="...">` section of that name takes the place of the general values
/// (the file's `<source_project>` and `<mod_time>` still count); without one, the
/// general values apply and every venue section is skipped.
pub fn read_global_prefs_in_venue(
    text: &str,
    name: &str,
    venue: &str,
    prefs: &mut Prefs,
) -> Result<Vec<XmlError>, XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    let element = preferences_element(&root).map_err(|e| e.in_file(name))?;
    let chosen = venue_section(element, venue);
    let about_the_file =
        |child: &&Element| matches!(child.name.as_str(), "source_project" | "mod_time");
    let children: Vec<&Element> = match chosen {
        Some(section) => {
            element.children.iter().filter(about_the_file).chain(section.children.iter()).collect()
        }
        None => element.children.iter().collect(),
    };
    let mut problems = Vec::new();
    for child in children {
        if let Err(problem) = apply_preference(child, prefs) {
            problems.push(problem.in_file(name));
        }
    }
    Ok(problems)
}

/// The `<venue>` section named `venue`, if the preferences have one (never for an empty
/// venue: a host in no venue takes the general values).
fn venue_section<'e>(element: &'e Element, venue: &str) -> Option<&'e Element> {
    if venue.is_empty() {
        return None;
    }
    element
        .children
        .iter()
        .find(|child| child.name == "venue" && child.attribute("name") == Some(venue))
}

/// When a set of web preferences was last changed on its project's site (`<mod_time>`,
/// 0 where it has none): `text` is a `<global_preferences>` document or its content as
/// a scheduler reply carries it. An error when it is not preferences at all.
pub fn web_prefs_mod_time(text: &str, name: &str) -> Result<f64, XmlError> {
    let wrapped;
    let document = if text.trim_start().starts_with("<global_preferences") {
        text
    } else {
        wrapped = web_prefs_document(text, None);
        &wrapped
    };
    let root = parse_document(document).map_err(|e| e.in_file(name))?;
    let element = preferences_element(&root).map_err(|e| e.in_file(name))?;
    match element.child("mod_time") {
        Some(mod_time) => mod_time.f64().map_err(|e| e.in_file(name)),
        None => Ok(0.0),
    }
}

/// The content of the `<global_preferences>` in a preferences document (what a
/// scheduler reply carries inside its own `<global_preferences>`); an error when the
/// text is not preferences.
pub fn web_prefs_content(text: &str, name: &str) -> Result<String, XmlError> {
    let root = parse_document(text).map_err(|e| e.in_file(name))?;
    let element = preferences_element(&root).map_err(|e| e.in_file(name))?;
    read_global_prefs(text, name, &mut Prefs::default())?.into_iter().next().map_or(Ok(()), Err)?;
    Ok(raw_content(text, element).trim().to_owned())
}

/// global_prefs.xml's text for the content of a reply's `<global_preferences>`: the
/// preferences as the project sent them, venues and all, and (as BOINC writes the file)
/// the project they came from when the content does not name it.
pub fn web_prefs_document(content: &str, source_project: Option<&str>) -> String {
    let mut text = String::from("<global_preferences>\n");
    if let Some(url) = source_project.filter(|_| !content.contains("<source_project>")) {
        let mut writer = XmlWriter::new();
        writer.text("source_project", url);
        text.push_str(&writer.finish());
    }
    text.push_str(content.trim());
    text.push_str("\n</global_preferences>\n");
    text
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
        "day_prefs" => {
            let day = day_prefs(child)?;
            // A bounded list: one entry per day, the last given for a day wins.
            prefs.day_prefs.retain(|d| d.day_of_week != day.day_of_week);
            prefs.day_prefs.push(day);
        }
        _ => {}
    }
    Ok(())
}

/// One `<day_prefs>`: the day and its own windows (a window needs both of its ends).
fn day_prefs(element: &Element) -> Result<DayPrefs, XmlError> {
    let hour = |name: &str| element.child(name).map(|c| c.f64_in(0.0, 24.0, HOURS)).transpose();
    let window = |start: Option<f64>, end: Option<f64>| {
        start.zip(end).map(|(start_hour, end_hour)| TimeWindow { start_hour, end_hour })
    };
    let day = element
        .child("day_of_week")
        .ok_or_else(|| element.error(XmlProblem::Missing("day_of_week")))?;
    let day_of_week = u8::try_from(day.u32()?).ok().filter(|d| *d <= 6).ok_or_else(|| {
        day.error(XmlProblem::OutOfRange { value: day.string(), expected: WEEKDAY })
    })?;
    Ok(DayPrefs {
        day_of_week,
        computing: window(hour("start_hour")?, hour("end_hour")?),
        network: window(hour("net_start_hour")?, hour("net_end_hour")?),
    })
}

/// The preferences in force as a `<global_preferences>` document (GUI RPC
/// `get_global_prefs_working`: the web preferences for the host's venue with the
/// override on top, as the client applies them).
pub fn working_prefs_text(prefs: &Prefs) -> String {
    let mut writer = XmlWriter::new();
    write_prefs(prefs, &mut writer);
    writer.finish()
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
    fn a_documents_content_is_what_a_reply_carries() {
        let text = "<global_preferences>\n<mod_time>3</mod_time>\n\
                    <venue name=\"home\"><cpu_usage_limit>30</cpu_usage_limit></venue>\n\
                    </global_preferences>\n";
        let content = web_prefs_content(text, "prefs.xml").expect("preferences");
        assert!(content.starts_with("<mod_time>3</mod_time>") && content.ends_with("</venue>"));
        assert_eq!(web_prefs_mod_time(&content, "reply").expect("content"), 3.0);
        let bad = "<global_preferences><cpu_usage_limit>300</cpu_usage_limit></global_preferences>";
        assert!(web_prefs_content(bad, "prefs.xml").is_err());
        assert!(web_prefs_content("<cc_config/>", "prefs.xml").is_err());
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
