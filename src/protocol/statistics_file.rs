//! BOINC's credit history file, `statistics_<project>.xml` (docs/design.md "Protocol
//! facts", statistics): `<project_statistics>` with the project's `<master_url>` and one
//! `<daily_statistics>` a day. GUI RPC `get_statistics` lists the same elements.

use super::error::{XmlError, XmlProblem};
use super::list_counts::ListCounts;
use super::xml_out::XmlOut;
use super::xml_tree::{Element, parse_document};
use crate::model::DailyStatistics;

/// The most days read from one file: BOINC keeps a month, a user's setting a few more.
pub const MAX_STATISTICS_DAYS: usize = 3660;

/// Writes the `<daily_statistics>` of one day.
pub(crate) fn write_day(out: &mut XmlOut, day: &DailyStatistics) {
    out.start("daily_statistics");
    out.real("day", day.day);
    out.real("user_total_credit", day.user_total_credit);
    out.real("user_expavg_credit", day.user_expavg_credit);
    out.real("host_total_credit", day.host_total_credit);
    out.real("host_expavg_credit", day.host_expavg_credit);
    out.end("daily_statistics");
}

/// Writes `<project_statistics>` for one project.
pub(crate) fn write_project_statistics(
    out: &mut XmlOut,
    master_url: &str,
    days: &[DailyStatistics],
) {
    out.start("project_statistics");
    out.text("master_url", master_url);
    for day in days {
        write_day(out, day);
    }
    out.end("project_statistics");
}

/// The text of a project's `statistics_<project>.xml`.
pub fn write_statistics_file(master_url: &str, days: &[DailyStatistics]) -> String {
    let mut out = XmlOut::new();
    write_project_statistics(&mut out, master_url, days);
    String::from_utf8_lossy(&out.finish()).into_owned()
}

fn read_day(element: &Element) -> Result<DailyStatistics, XmlError> {
    let mut day = DailyStatistics::default();
    for child in &element.children {
        let value = match child.name.as_str() {
            "day" => &mut day.day,
            "user_total_credit" => &mut day.user_total_credit,
            "user_expavg_credit" => &mut day.user_expavg_credit,
            "host_total_credit" => &mut day.host_total_credit,
            "host_expavg_credit" => &mut day.host_expavg_credit,
            _ => continue,
        };
        *value = child.non_negative_f64()?;
    }
    Ok(day)
}

/// Reads a `statistics_<project>.xml`: its master URL and days, oldest first.
pub fn read_statistics_file(text: &str) -> Result<(String, Vec<DailyStatistics>), XmlError> {
    let root = parse_document(text)?;
    if root.name != "project_statistics" {
        return Err(root.error(XmlProblem::WrongRoot { expected: "project_statistics" }));
    }
    let master_url = root.required_text("master_url")?.to_owned();
    let mut counted = ListCounts::default();
    let mut days = Vec::new();
    for child in root.children.iter().filter(|c| c.name == "daily_statistics") {
        counted.check(child, "daily_statistics", MAX_STATISTICS_DAYS)?;
        days.push(read_day(child)?);
    }
    days.sort_by(|a, b| a.day.total_cmp(&b.day));
    Ok((master_url, days))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_what_it_writes() {
        let days = vec![
            DailyStatistics { day: 86_400.0, user_total_credit: 1234.5, ..Default::default() },
            DailyStatistics { day: 172_800.0, host_expavg_credit: 3.25, ..Default::default() },
        ];
        let text = write_statistics_file("http://p/", &days);
        assert!(text.contains("<user_total_credit>1234.500000</user_total_credit>"), "{text}");
        assert_eq!(read_statistics_file(&text).expect("read"), ("http://p/".to_owned(), days));
    }

    #[test]
    fn bad_files_are_errors() {
        assert!(read_statistics_file("<statistics/>").is_err());
        assert!(read_statistics_file("<project_statistics></project_statistics>").is_err());
        let negative = "<project_statistics><master_url>u</master_url><daily_statistics>\
                        <day>-1</day></daily_statistics></project_statistics>";
        assert!(read_statistics_file(negative).is_err());
    }
}
