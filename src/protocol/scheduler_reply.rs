//! `<scheduler_reply>` (docs/design.md "Protocol facts"; seed 003 "Handling scheduler
//! replies"): what a project answers, as BOINC servers write it and the real client
//! accepts it (fixtures/boinc-7.20.5 sched_reply_*): the project's and account's names
//! and ids, the host id, `request_delay`, messages, acknowledged and aborted results,
//! apps, app versions, files, workunits and results (repeated, interleaved in any order),
//! the code-signing key and its signature, preferences (kept verbatim, venues and all),
//! and the flags that say which resources the project has no apps for.
//!
//! A reply over one of the `MAX_REPLY_*` bounds is refused whole with an error, not cut: a
//! server sending more than these is broken or hostile, and a cut reply would drop jobs
//! the server counts as sent. Text before the `<scheduler_reply>` start tag and after its
//! end tag (an HTTP chunk length, a CGI header) is skipped, as the real client does.

use super::app_description::{AppDescription, AppVersionDescription};
use super::error::{XmlError, XmlProblem};
use super::file_description::FileDescription;
use super::job_description::{ResultDescription, WorkunitDescription};
use super::list_counts::ListCounts;
use super::notices::{RssFeed, parse_rss_feeds, write_rss_feeds};
use super::server_message::{NoWorkReason, ServerMessage};
use super::xml_tree::{Element, parse_message, raw_content};
use super::xml_write::XmlWriter;
use crate::model::{ResourceMap, ResourceType};
use serde::{Deserialize, Serialize};

/// The most `<result>`s, and the most `<workunit>`s, a reply may carry: ten times what
/// an emulated server sends at most.
pub const MAX_REPLY_JOBS: usize = 10_000;
/// The most `<file_info>`s a reply may carry: a few per job.
pub const MAX_REPLY_FILES: usize = 50_000;
/// The most `<app>`s, and the most `<app_version>`s, a reply may carry.
pub const MAX_REPLY_APPS: usize = 1_000;
/// The most `<message>`s a reply may carry.
pub const MAX_REPLY_MESSAGES: usize = 1_000;
/// The most `<result_ack>`s (and of each kind of abort) a reply may carry: one per job a
/// client can hold.
pub const MAX_REPLY_RESULT_NAMES: usize = 100_000;
/// The most `<delete_file_info>`s a reply may carry.
pub const MAX_REPLY_FILE_DELETIONS: usize = 100_000;

/// A scheduler reply.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SchedulerReply {
    /// The server's version, major × 100 + minor (`<scheduler_version>`).
    pub scheduler_version: Option<u32>,
    /// The client is not to use duration correction (`<dont_use_dcf/>`).
    pub dont_use_dcf: bool,
    /// The project's master URL as it calls itself (`<master_url>`).
    pub master_url: Option<String>,
    /// The project has ended (`<ended>`).
    pub ended: bool,
    /// Don't contact the project again for this many seconds (`<request_delay>`).
    pub request_delay: Option<f64>,
    /// Messages to the user.
    pub messages: Vec<ServerMessage>,
    /// The project's name (`<project_name>`).
    pub project_name: Option<String>,
    /// The project is down for maintenance (`<project_is_down/>`).
    pub project_is_down: bool,
    /// The project asks for every in-progress job in requests (`<send_full_workload/>`).
    pub send_full_workload: bool,
    /// Contact the project again after this many seconds (`<next_rpc_delay>`).
    pub next_rpc_delay: Option<f64>,
    /// The account's user id (`<userid>`).
    pub userid: Option<u64>,
    /// The account's user name (`<user_name>`).
    pub user_name: Option<String>,
    /// The user's total credit (`<user_total_credit>`).
    pub user_total_credit: Option<f64>,
    /// The user's recent average credit (`<user_expavg_credit>`).
    pub user_expavg_credit: Option<f64>,
    /// When the account was made (`<user_create_time>`).
    pub user_create_time: Option<f64>,
    /// Hash of the account's e-mail address (`<email_hash>`).
    pub email_hash: Option<String>,
    /// The user's cross-project id (`<cross_project_id>`).
    pub cross_project_id: Option<String>,
    /// The account's global preferences, verbatim (the content of
    /// `<global_preferences>`).
    pub global_preferences: Option<String>,
    /// The account's project preferences, verbatim (the content of
    /// `<project_preferences>`).
    pub project_preferences: Option<String>,
    /// A new host id: the project made a new host record (`<hostid>`).
    pub hostid: Option<u64>,
    /// The host's total credit (`<host_total_credit>`).
    pub host_total_credit: Option<f64>,
    /// The host's recent average credit (`<host_expavg_credit>`).
    pub host_expavg_credit: Option<f64>,
    /// The host's venue (`<host_venue>`).
    pub host_venue: Option<String>,
    /// When the host record was made (`<host_create_time>`).
    pub host_create_time: Option<f64>,
    /// The account's team id (`<teamid>`).
    pub teamid: Option<u64>,
    /// The account's team name (`<team_name>`).
    pub team_name: Option<String>,
    /// Reported results the project has recorded: the client may forget them
    /// (`<result_ack><name>`).
    pub result_acks: Vec<String>,
    /// Results to abort (`<result_abort><name>`).
    pub result_aborts: Vec<String>,
    /// Results to abort unless started (`<result_abort_if_not_started><name>`).
    pub result_aborts_if_not_started: Vec<String>,
    /// Apps (`<app>`).
    pub apps: Vec<AppDescription>,
    /// Files (`<file_info>`).
    pub file_infos: Vec<FileDescription>,
    /// App versions (`<app_version>`).
    pub app_versions: Vec<AppVersionDescription<'static>>,
    /// Workunits (`<workunit>`).
    pub workunits: Vec<WorkunitDescription>,
    /// Results: the jobs sent (`<result>`).
    pub results: Vec<ResultDescription>,
    /// The project's code-signing key (`<code_sign_key>`).
    pub code_sign_key: Option<String>,
    /// The new key signed with the old one, for a key change
    /// (`<code_sign_key_signature>`).
    pub code_sign_key_signature: Option<String>,
    /// The project received the client's trickle messages (`<message_ack/>`).
    pub message_ack: bool,
    /// The project's apps don't use the CPU intensively (`<non_cpu_intensive/>`).
    pub non_cpu_intensive: bool,
    /// Check app files' checksums before each start (`<verify_files_on_app_start/>`).
    pub verify_files_on_app_start: bool,
    /// Sticky files the client may delete (`<delete_file_info>`).
    pub delete_file_infos: Vec<String>,
    /// Per resource: the project has no app for it (`<no_rsc_apps>`, and the older
    /// `<no_cpu_apps>`, `<no_cuda_apps>`, `<no_ati_apps>`, `<no_intel_gpu_apps>`).
    pub no_rsc_apps: ResourceMap<bool>,
    /// The project's notice feeds (`<rss_feeds>`); `None` when the reply names none,
    /// which leaves the ones the client knows in place.
    pub rss_feeds: Option<Vec<RssFeed>>,
}

impl SchedulerReply {
    /// Why the project sent no work, as its messages say.
    pub fn no_work_reasons(&self) -> impl Iterator<Item = NoWorkReason> + '_ {
        self.messages.iter().filter_map(ServerMessage::no_work_reason)
    }

    /// Reads a reply; errors name "scheduler reply" and the line.
    pub fn from_xml(text: &str) -> Result<SchedulerReply, XmlError> {
        const NAME: &str = "scheduler reply";
        const START: &str = "<scheduler_reply";
        const END: &str = "</scheduler_reply>";
        let start = text.find(START).unwrap_or(0);
        let end = text.rfind(END).map_or(text.len(), |at| at + END.len()).max(start);
        let skipped_lines = text[..start].matches('\n').count();
        let body = &text[start..end];
        let located = |e: XmlError| {
            let line = e.line + skipped_lines;
            XmlError { line, ..e.in_file(NAME) }
        };
        let root = parse_message(body).map_err(located)?;
        Self::parse(body, &root).map_err(located)
    }

    fn parse(text: &str, root: &Element) -> Result<SchedulerReply, XmlError> {
        if root.name != "scheduler_reply" {
            return Err(root.error(XmlProblem::WrongRoot { expected: "scheduler_reply" }));
        }
        let mut reply = SchedulerReply::default();
        let mut counted = ListCounts::default();
        for child in &root.children {
            let name = child.name.as_str();
            match name {
                "scheduler_version" => reply.scheduler_version = Some(child.u32()?),
                "dont_use_dcf" => reply.dont_use_dcf = child.flag()?,
                "master_url" => reply.master_url = Some(child.string()),
                "ended" => reply.ended = child.flag()?,
                "request_delay" => reply.request_delay = Some(child.non_negative_f64()?),
                "message" => {
                    counted.check(child, "message", MAX_REPLY_MESSAGES)?;
                    reply.messages.push(ServerMessage::parse(child));
                }
                "project_name" => reply.project_name = Some(child.string()),
                "project_is_down" => reply.project_is_down = child.flag()?,
                "send_full_workload" => reply.send_full_workload = child.flag()?,
                "next_rpc_delay" => reply.next_rpc_delay = Some(child.non_negative_f64()?),
                "userid" => reply.userid = Some(child.u64()?),
                "user_name" => reply.user_name = Some(child.string()),
                "user_total_credit" => reply.user_total_credit = Some(child.f64()?),
                "user_expavg_credit" => reply.user_expavg_credit = Some(child.f64()?),
                "user_create_time" => reply.user_create_time = Some(child.f64()?),
                "email_hash" => reply.email_hash = Some(child.string()),
                "cross_project_id" => reply.cross_project_id = Some(child.string()),
                "global_preferences" => {
                    reply.global_preferences = Some(raw_content(text, child).to_owned())
                }
                "project_preferences" => {
                    reply.project_preferences = Some(raw_content(text, child).to_owned())
                }
                "hostid" => reply.hostid = Some(child.u64()?),
                "host_total_credit" => reply.host_total_credit = Some(child.f64()?),
                "host_expavg_credit" => reply.host_expavg_credit = Some(child.f64()?),
                "host_venue" => reply.host_venue = Some(child.string()),
                "host_create_time" => reply.host_create_time = Some(child.f64()?),
                "teamid" => reply.teamid = Some(child.u64()?),
                "team_name" => reply.team_name = Some(child.string()),
                "result_ack" | "result_abort" | "result_abort_if_not_started" => {
                    counted.check(child, named_kind(name), MAX_REPLY_RESULT_NAMES)?;
                    let result = child.required_text("name")?.to_owned();
                    match name {
                        "result_ack" => reply.result_acks.push(result),
                        "result_abort" => reply.result_aborts.push(result),
                        _ => reply.result_aborts_if_not_started.push(result),
                    }
                }
                "app" => {
                    counted.check(child, "app", MAX_REPLY_APPS)?;
                    reply.apps.push(AppDescription::parse(child)?);
                }
                "file_info" => {
                    counted.check(child, "file_info", MAX_REPLY_FILES)?;
                    reply.file_infos.push(FileDescription::parse(child)?);
                }
                "app_version" => {
                    counted.check(child, "app_version", MAX_REPLY_APPS)?;
                    reply.app_versions.push(AppVersionDescription::parse(child)?);
                }
                "workunit" => {
                    counted.check(child, "workunit", MAX_REPLY_JOBS)?;
                    reply.workunits.push(WorkunitDescription::parse(child)?);
                }
                "result" => {
                    counted.check(child, "result", MAX_REPLY_JOBS)?;
                    reply.results.push(ResultDescription::parse(child)?);
                }
                "code_sign_key" => reply.code_sign_key = Some(child.string()),
                "code_sign_key_signature" => reply.code_sign_key_signature = Some(child.string()),
                "message_ack" => reply.message_ack = child.flag()?,
                "non_cpu_intensive" => reply.non_cpu_intensive = child.flag()?,
                "verify_files_on_app_start" => reply.verify_files_on_app_start = child.flag()?,
                "delete_file_info" => {
                    counted.check(child, "delete_file_info", MAX_REPLY_FILE_DELETIONS)?;
                    reply.delete_file_infos.push(child.string());
                }
                "no_rsc_apps" => {
                    if let Some(resource) = ResourceType::from_boinc_name(child.trimmed()) {
                        reply.no_rsc_apps[resource] = true;
                    }
                }
                "rss_feeds" => reply.rss_feeds = Some(parse_rss_feeds(child)?),
                "no_cpu_apps" => reply.no_rsc_apps[ResourceType::Cpu] |= child.flag()?,
                "no_cuda_apps" => reply.no_rsc_apps[ResourceType::Nvidia] |= child.flag()?,
                "no_ati_apps" => reply.no_rsc_apps[ResourceType::Amd] |= child.flag()?,
                "no_intel_gpu_apps" => reply.no_rsc_apps[ResourceType::Intel] |= child.flag()?,
                _ => {}
            }
        }
        Ok(reply)
    }

    /// The reply as a BOINC server writes it, in its servers' order.
    pub fn to_xml(&self) -> String {
        let mut w = XmlWriter::new();
        w.open("scheduler_reply");
        if let Some(version) = self.scheduler_version {
            w.integer("scheduler_version", version);
        }
        w.empty_if("dont_use_dcf", self.dont_use_dcf);
        if let Some(url) = &self.master_url {
            w.text("master_url", url);
        }
        if self.ended {
            w.flag("ended", true);
        }
        w.number_if_any("request_delay", self.request_delay);
        for message in &self.messages {
            message.write(&mut w);
        }
        if let Some(name) = &self.project_name {
            w.text("project_name", name);
        }
        w.empty_if("project_is_down", self.project_is_down);
        w.empty_if("send_full_workload", self.send_full_workload);
        w.number_if_any("next_rpc_delay", self.next_rpc_delay);
        if let Some(id) = self.userid {
            w.integer("userid", id);
        }
        optional_text(&mut w, "user_name", &self.user_name);
        w.number_if_any("user_total_credit", self.user_total_credit);
        w.number_if_any("user_expavg_credit", self.user_expavg_credit);
        w.number_if_any("user_create_time", self.user_create_time);
        optional_text(&mut w, "email_hash", &self.email_hash);
        optional_text(&mut w, "cross_project_id", &self.cross_project_id);
        if let Some(prefs) = &self.global_preferences {
            w.verbatim("global_preferences", prefs);
        }
        if let Some(prefs) = &self.project_preferences {
            w.verbatim("project_preferences", prefs);
        }
        if let Some(id) = self.hostid {
            w.integer("hostid", id);
        }
        w.number_if_any("host_total_credit", self.host_total_credit);
        w.number_if_any("host_expavg_credit", self.host_expavg_credit);
        optional_text(&mut w, "host_venue", &self.host_venue);
        w.number_if_any("host_create_time", self.host_create_time);
        if let Some(id) = self.teamid {
            w.integer("teamid", id);
        }
        optional_text(&mut w, "team_name", &self.team_name);
        for (kind, names) in [
            ("result_ack", &self.result_acks),
            ("result_abort", &self.result_aborts),
            ("result_abort_if_not_started", &self.result_aborts_if_not_started),
        ] {
            for name in names {
                w.open(kind);
                w.text("name", name);
                w.close(kind);
            }
        }
        for app in &self.apps {
            app.write(&mut w);
        }
        for file in &self.file_infos {
            file.write(&mut w);
        }
        for version in &self.app_versions {
            version.write(&mut w, true);
        }
        for workunit in &self.workunits {
            workunit.write(&mut w);
        }
        for result in &self.results {
            result.write(&mut w);
        }
        if let Some(key) = &self.code_sign_key {
            w.block("code_sign_key", key);
        }
        if let Some(signature) = &self.code_sign_key_signature {
            w.block("code_sign_key_signature", signature);
        }
        w.empty_if("message_ack", self.message_ack);
        w.empty_if("non_cpu_intensive", self.non_cpu_intensive);
        w.empty_if("verify_files_on_app_start", self.verify_files_on_app_start);
        for name in &self.delete_file_infos {
            w.text("delete_file_info", name);
        }
        for (resource, &none) in self.no_rsc_apps.iter() {
            if none {
                w.text("no_rsc_apps", resource.boinc_name());
            }
        }
        if let Some(feeds) = &self.rss_feeds {
            write_rss_feeds(&mut w, feeds);
        }
        w.close("scheduler_reply");
        w.finish()
    }
}

/// The kind a result-name list is counted under.
fn named_kind(name: &str) -> &'static str {
    match name {
        "result_ack" => "result_ack",
        "result_abort" => "result_abort",
        _ => "result_abort_if_not_started",
    }
}

fn optional_text(writer: &mut XmlWriter, name: &str, text: &Option<String>) {
    if let Some(text) = text {
        writer.text(name, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_around_the_reply_is_skipped_and_lines_still_count() {
        let text = "Content-type: text/xml\n\n<scheduler_reply>\n<request_delay>x</request_delay>\n\
                    </scheduler_reply>\n0\r\n";
        let error = SchedulerReply::from_xml(text).expect_err("not a number");
        assert_eq!((error.file.as_str(), error.line), ("scheduler reply", 4));
        assert_eq!(error.element.as_deref(), Some("request_delay"));
        let ok = text.replace(">x<", ">60<");
        assert_eq!(SchedulerReply::from_xml(&ok).expect("valid").request_delay, Some(60.0));
    }

    #[test]
    fn every_list_of_a_reply_is_bounded() {
        for (one, element, limit) in [
            (
                "<workunit><name>w</name><app_name>a</app_name></workunit>",
                "workunit",
                MAX_REPLY_JOBS,
            ),
            ("<file_info><name>f</name></file_info>", "file_info", MAX_REPLY_FILES),
            ("<app><name>a</name></app>", "app", MAX_REPLY_APPS),
            ("<message>m</message>", "message", MAX_REPLY_MESSAGES),
            ("<result_ack><name>r</name></result_ack>", "result_ack", MAX_REPLY_RESULT_NAMES),
        ] {
            let text = format!("<scheduler_reply>{}</scheduler_reply>", one.repeat(limit + 1));
            let error = SchedulerReply::from_xml(&text).expect_err(element);
            assert_eq!(error.problem, XmlProblem::TooMany { element, limit }, "{element}");
            let text = format!("<scheduler_reply>{}</scheduler_reply>", one.repeat(limit));
            assert!(SchedulerReply::from_xml(&text).is_ok(), "{element}: {limit} are taken");
        }
    }

    #[test]
    fn too_many_jobs_is_an_error_naming_the_element() {
        let results =
            "<result><name>r</name><wu_name>w</wu_name></result>\n".repeat(MAX_REPLY_JOBS + 1);
        let error =
            SchedulerReply::from_xml(&format!("<scheduler_reply>\n{results}</scheduler_reply>"))
                .expect_err("over the limit");
        assert_eq!(error.problem, XmlProblem::TooMany { element: "result", limit: MAX_REPLY_JOBS });
        assert_eq!(error.line, MAX_REPLY_JOBS + 2);
        let text = format!(
            "<scheduler_reply><message>{}</message></scheduler_reply>",
            "x".repeat(2 << 20)
        );
        let error = SchedulerReply::from_xml(&text).expect_err("text too long");
        assert!(matches!(error.problem, XmlProblem::TextTooLong(_)));
    }

    #[test]
    fn wrong_root_missing_names_and_old_flags() {
        let error = SchedulerReply::from_xml("<scheduler_request/>").expect_err("root");
        assert_eq!(error.problem, XmlProblem::WrongRoot { expected: "scheduler_reply" });
        let error = SchedulerReply::from_xml("<scheduler_reply><result_ack/></scheduler_reply>")
            .expect_err("an ack names its result");
        assert_eq!(error.problem, XmlProblem::Missing("name"));
        let reply = SchedulerReply::from_xml(
            "<scheduler_reply><no_cpu_apps>1</no_cpu_apps><no_cuda_apps>0</no_cuda_apps>\
             <no_rsc_apps>ATI</no_rsc_apps><no_rsc_apps>apple_gpu</no_rsc_apps>\
             <unknown><nested/></unknown><message>hi</message></scheduler_reply>",
        )
        .expect("valid");
        assert!(reply.no_rsc_apps[ResourceType::Cpu] && reply.no_rsc_apps[ResourceType::Amd]);
        assert!(!reply.no_rsc_apps[ResourceType::Nvidia]);
        assert_eq!(reply.messages, [ServerMessage::low("hi")]);
    }
}
