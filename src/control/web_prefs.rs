//! A project's web preferences arriving in a scheduler reply (docs/design.md "Protocol
//! facts", preferences): as BOINC keeps them, one set for the whole host in
//! global_prefs.xml, replaced by a reply's set only when that set was changed later on
//! its site (`<mod_time>`): with several projects of one account, or an account manager
//! beside them, the newest edit wins whichever project delivers it. The caller reads the
//! file, writes what this returns and applies it (the host's venue, which the reply has
//! already set on its project, chooses the section: `configuration`).

use crate::protocol::{XmlError, web_prefs_document, web_prefs_mod_time};

/// What to do with the `<global_preferences>` of a reply from `master_url`, whose
/// content is `content`, when global_prefs.xml holds `current` (`None`: no file): the
/// new file's text when the reply's set is newer (or the file is absent or unreadable:
/// a damaged file gives way to a good set), `Ok(None)` to keep the file, an error when
/// the reply's preferences are not preferences at all (the file is kept).
pub fn web_prefs_update(
    current: Option<&str>,
    content: &str,
    master_url: &str,
) -> Result<Option<String>, XmlError> {
    let incoming = web_prefs_mod_time(content, "the scheduler reply's global_preferences")?;
    let kept = current.and_then(|text| web_prefs_mod_time(text, "global_prefs.xml").ok());
    if kept.is_some_and(|kept| kept >= incoming) {
        return Ok(None);
    }
    Ok(Some(web_prefs_document(content, Some(master_url))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Prefs;
    use crate::protocol::read_global_prefs_in_venue;

    const TWO_VENUES: &str = "<mod_time>1700000000</mod_time>\n\
        <cpu_usage_limit>80</cpu_usage_limit><max_ncpus_pct>100</max_ncpus_pct>\n\
        <venue name=\"home\"><cpu_usage_limit>30</cpu_usage_limit>\
        <start_hour>1</start_hour><end_hour>2</end_hour></venue>\n\
        <venue name=\"work\"><cpu_usage_limit>50</cpu_usage_limit></venue>";

    #[test]
    fn a_newer_set_replaces_the_file_and_an_older_one_does_not() {
        let first = web_prefs_update(None, TWO_VENUES, "http://p/").expect("prefs").expect("new");
        assert!(first.contains("<source_project>http://p/</source_project>"), "{first}");
        assert_eq!(web_prefs_mod_time(&first, "f").expect("read"), 1_700_000_000.0);
        // The same set again, or an older one from another project: the file stays.
        assert_eq!(web_prefs_update(Some(&first), TWO_VENUES, "http://q/").expect("ok"), None);
        let older = "<mod_time>1600000000</mod_time><cpu_usage_limit>10</cpu_usage_limit>";
        assert_eq!(web_prefs_update(Some(&first), older, "http://q/").expect("ok"), None);
        let newer = "<mod_time>1800000000</mod_time><cpu_usage_limit>10</cpu_usage_limit>";
        let replaced = web_prefs_update(Some(&first), newer, "http://q/").expect("ok");
        assert!(replaced.expect("newer").contains("http://q/"));
        // A damaged file gives way; preferences that are not XML are refused.
        assert!(web_prefs_update(Some("<global_pre"), older, "http://q/").expect("ok").is_some());
        assert!(web_prefs_update(None, "<mod_time>x</mod_time>", "http://q/").is_err());
        assert!(web_prefs_update(None, "<a>", "http://q/").is_err());
    }

    #[test]
    fn the_hosts_venue_chooses_the_section() {
        let file = web_prefs_update(None, TWO_VENUES, "http://p/").expect("prefs").expect("new");
        let read = |venue: &str| {
            let mut prefs = Prefs::default();
            let problems = read_global_prefs_in_venue(&file, "global_prefs.xml", venue, &mut prefs)
                .expect("preferences");
            assert!(problems.is_empty(), "{problems:?}");
            prefs
        };
        let home = read("home");
        assert_eq!(home.cpu_usage_limit, 30.0);
        assert_eq!((home.reported.start_hour, home.reported.end_hour), (1.0, 2.0));
        assert_eq!(home.reported.mod_time, 1_700_000_000.0, "the file's own elements count");
        assert_eq!(read("work").cpu_usage_limit, 50.0);
        let general = read("");
        assert_eq!((general.cpu_usage_limit, general.reported.start_hour), (80.0, 0.0));
        assert_eq!(read("school").cpu_usage_limit, 80.0, "no section: the general values");
    }
}
