//! The layout of BOINC's data directory (docs/design.md "State"; fixtures/boinc-7.20.5/state):
//! the names of the state files, of each project's account file and of the other files
//! the client keeps per project, so that boinc-rs and the real client read and write
//! the same directory. Names only; the caller reads, writes and removes.

use crate::control::project_dir;

/// The client's state.
pub const CLIENT_STATE: &str = "client_state.xml";
/// A new state being written; renamed to [`CLIENT_STATE`] once complete.
pub const CLIENT_STATE_NEXT: &str = "client_state_next.xml";
/// The state before the last write: the fallback when [`CLIENT_STATE`] is damaged.
pub const CLIENT_STATE_PREV: &str = "client_state_prev.xml";
/// The global preferences a project sent.
pub const GLOBAL_PREFS: &str = "global_prefs.xml";
/// The user's local preferences, applied over [`GLOBAL_PREFS`].
pub const GLOBAL_PREFS_OVERRIDE: &str = "global_prefs_override.xml";
/// The client's configuration.
pub const CC_CONFIG: &str = "cc_config.xml";
/// A project's app configuration, in the project's directory.
pub const APP_CONFIG: &str = "app_config.xml";
/// A project's anonymous-platform declaration (the volunteer's own apps), in the
/// project's directory.
pub const APP_INFO: &str = "app_info.xml";
/// The file a running client holds locked, so that one client runs per directory.
pub const LOCK_FILE: &str = "lockfile";

/// A master URL as it appears in file names: without its scheme and trailing slash,
/// every character but letters, digits, `.`, `-` and `_` made `_`
/// (`http://127.0.0.1:8088/` → `127.0.0.1_8088`). A name of dots alone, which would
/// leave the directory it is joined to, is made underscores.
pub fn escape_project_url(master_url: &str) -> String {
    let without_scheme = master_url.split_once("://").map_or(master_url, |(_, rest)| rest);
    let trimmed = without_scheme.trim_end_matches('/');
    let escaped: String = trimmed
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') { c } else { '_' })
        .collect();
    if escaped.chars().all(|c| c == '.') { "_".repeat(escaped.len().max(1)) } else { escaped }
}

/// The account file of the project with this master URL: `account_<escaped URL>.xml`.
pub fn account_file_name(master_url: &str) -> String {
    format!("account_{}.xml", escape_project_url(master_url))
}

/// The credit history of the project with this master URL:
/// `statistics_<escaped URL>.xml`.
pub fn statistics_file_name(master_url: &str) -> String {
    format!("statistics_{}.xml", escape_project_url(master_url))
}

/// The job log of the project with this master URL: `job_log_<escaped URL>.txt`.
pub fn job_log_file_name(master_url: &str) -> String {
    format!("job_log_{}.txt", escape_project_url(master_url))
}

/// Whether a file name is an account file's (`account_*.xml`).
pub fn is_account_file_name(name: &str) -> bool {
    name.len() > "account_.xml".len() && name.starts_with("account_") && name.ends_with(".xml")
}

/// What the client keeps for one project in the data directory: what a detach removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectFiles {
    /// Files directly in the data directory: the account file, the credit statistics,
    /// the last scheduler request and reply, the master page, the job log.
    pub files: Vec<String>,
    /// The project's directory (its apps, inputs and outputs), relative to the data
    /// directory.
    pub directory: String,
}

/// The files of the project with this master URL.
pub fn project_files(master_url: &str) -> ProjectFiles {
    let escaped = escape_project_url(master_url);
    ProjectFiles {
        files: vec![
            account_file_name(master_url),
            statistics_file_name(master_url),
            format!("sched_request_{escaped}.xml"),
            format!("sched_reply_{escaped}.xml"),
            format!("master_{escaped}.xml"),
            job_log_file_name(master_url),
        ],
        directory: project_dir(master_url),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_file_names_follow_the_real_client() {
        // fixtures/boinc-7.20.5/state/account_127.0.0.1_8088.xml
        assert_eq!(account_file_name("http://127.0.0.1:8088/"), "account_127.0.0.1_8088.xml");
        assert_eq!(
            account_file_name("https://einstein.phys.uwm.edu/"),
            "account_einstein.phys.uwm.edu.xml"
        );
        assert_eq!(escape_project_url("http://a.org/b/c"), "a.org_b_c");
        assert_eq!(escape_project_url("http://../"), "__");
        assert!(is_account_file_name("account_127.0.0.1_8088.xml"));
        assert!(!is_account_file_name("account_.xml"));
        assert!(!is_account_file_name("master_127.0.0.1_8088.xml"));
    }

    #[test]
    fn a_projects_files_share_its_escaped_url() {
        let files = project_files("http://127.0.0.1:8088/");
        assert_eq!(files.directory, "projects/127.0.0.1_8088");
        assert!(files.files.contains(&"account_127.0.0.1_8088.xml".to_owned()));
        assert!(files.files.contains(&"master_127.0.0.1_8088.xml".to_owned()));
        assert!(files.files.iter().all(|f| !f.contains('/')));
    }
}
