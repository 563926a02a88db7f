//! `<scheduler_request>` (docs/design.md "Protocol facts"; seed 003 "Scheduler request and
//! reply message"): everything the client tells a project at each scheduler RPC, in the
//! elements and order of the real client (fixtures/boinc-7.20.5 sched_request_01–04 and
//! boinc-8.3.0 sched_request_1/3): the account and host ids, the client's version and
//! platform, resource shares and DCF, the work request (`work_req_seconds`, per resource
//! `cpu_req_secs`/`cpu_req_instances` and the GPUs' `req_secs`/`req_instances` in
//! `<coprocs>`), the code-signing key, the working preferences, the host's description
//! and statistics, disk usage, reported results, sticky files, app versions, the other
//! results held and every project's in-progress results.
//!
//! A project server reads it with [`SchedulerRequest::from_xml`]; the client writes it
//! with [`SchedulerRequest::to_xml`]. Unknown elements are skipped; lists are bounded by
//! [`MAX_LISTED`].

use super::app_description::AppVersionDescription;
use super::error::{XmlError, XmlProblem};
use super::host_info::parse_net_stats;
use super::host_report::{DiskUsageReport, GpuReport, HostInfo, TimeStatsReport, write_net_stats};
use super::list_counts::ListCounts;
use super::prefs::{apply_prefs, write_prefs};
use super::queue_report::{InProgressResult, OtherResult, StickyFile};
use super::reported_result::ReportedResult;
use super::xml_tree::{Element, parse_message};
use super::xml_write::XmlWriter;
use crate::model::{NetStats, Prefs, ResourceType};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt;

/// The most entries a request's list (reported results, other results, in-progress
/// results, sticky files, app versions) may have: far beyond any real client's queue,
/// low enough that a server reading a hostile request stays within bounded memory.
pub const MAX_LISTED: usize = 100_000;

/// The most GPU types a request may list.
const MAX_GPU_TYPES: usize = 16;

/// A client version, `major.minor.release`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct ClientVersion {
    /// Major version (`<core_client_major_version>`).
    pub major: u32,
    /// Minor version (`<core_client_minor_version>`).
    pub minor: u32,
    /// Release (`<core_client_release>`).
    pub release: u32,
}

impl fmt::Display for ClientVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.release)
    }
}

/// A scheduler request. Its text (names, the host's description, the jobs and app
/// versions it lists) may be borrowed from the state and the client identity the
/// request was made from (`'a`); one read from text owns everything.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SchedulerRequest<'a> {
    /// The account's key (`<authenticator>`).
    pub authenticator: Cow<'a, str>,
    /// The project's id for this host (`<hostid>`; 0: none yet).
    pub hostid: u64,
    /// Requests since the project last gave a host id (`<rpc_seqno>`).
    pub rpc_seqno: u64,
    /// The client's version (`<core_client_*_version>`, `<core_client_release>`).
    pub client_version: ClientVersion,
    /// The project's share of all projects' resource shares.
    pub resource_share_fraction: f64,
    /// Its share among projects with runnable jobs (`<rrs_fraction>`).
    pub rrs_fraction: f64,
    /// Its share among projects that could have runnable jobs (`<prrs_fraction>`).
    pub prrs_fraction: f64,
    /// The project's duration correction factor.
    pub duration_correction_factor: f64,
    /// Several clients share the host (`<allow_multiple_clients>`).
    pub allow_multiple_clients: bool,
    /// Apps run under separate accounts (`<sandbox>`).
    pub sandbox: bool,
    /// The user asked for no new work (`<dont_send_work>`).
    pub dont_send_work: bool,
    /// The scalar request old servers read: seconds of work (`<work_req_seconds>`).
    pub work_req_seconds: f64,
    /// CPU instance-seconds asked for (`<cpu_req_secs>`, seed 003).
    pub cpu_req_secs: f64,
    /// CPU instances to keep busy (`<cpu_req_instances>`, seed 003).
    pub cpu_req_instances: f64,
    /// Seconds until a CPU would idle (`<estimated_delay>`).
    pub estimated_delay: f64,
    /// The client understands plan classes (`<client_cap_plan_class>`).
    pub client_cap_plan_class: bool,
    /// The client's platform (`<platform_name>`).
    pub platform_name: Cow<'a, str>,
    /// Other platforms it can run (`<alt_platform><name>`).
    pub alt_platforms: Cow<'a, [String]>,
    /// The project's code-signing key the client holds (`<code_sign_key>`).
    pub code_sign_key: Option<Cow<'a, str>>,
    /// The preferences in force (`<working_global_preferences>`).
    pub working_global_preferences: Option<Prefs>,
    /// The user's cross-project id (`<cross_project_id>`).
    pub cross_project_id: Option<Cow<'a, str>>,
    /// Availability statistics.
    pub time_stats: TimeStatsReport,
    /// Network averages.
    pub net_stats: NetStats,
    /// The host.
    pub host_info: HostInfo<'a>,
    /// Disk usage and free space.
    pub disk_usage: DiskUsageReport,
    /// Per GPU type: the devices and the work asked for (`<coprocs>`).
    pub coprocs: Vec<GpuReport<'a>>,
    /// Finished jobs reported (`<result>`).
    pub results: Vec<ReportedResult<'a>>,
    /// Sticky files held for the project (`<file_info>`).
    pub sticky_files: Vec<StickyFile>,
    /// The project's app versions the client has (`<app_versions>`).
    pub app_versions: Vec<AppVersionDescription<'a>>,
    /// The project's jobs held, not reported (`<other_results>`).
    pub other_results: Vec<OtherResult<'a>>,
    /// Every project's jobs still to compute (`<in_progress_results>`); `None`: not sent.
    pub in_progress_results: Option<Vec<InProgressResult<'a>>>,
    /// The client's own name and version (`<client_brand>`, last in the request, as
    /// BOINC's client writes it from client_brand.txt): the version elements above
    /// stay the protocol version it speaks.
    #[serde(default)]
    pub client_brand: Option<Cow<'a, str>>,
}

impl<'a> SchedulerRequest<'a> {
    /// The same request, owning everything (to keep it beyond the state it was made
    /// from).
    pub fn into_owned(self) -> SchedulerRequest<'static> {
        let owned = |text: Cow<'_, str>| -> Cow<'static, str> { Cow::Owned(text.into_owned()) };
        SchedulerRequest {
            authenticator: owned(self.authenticator),
            platform_name: owned(self.platform_name),
            alt_platforms: Cow::Owned(self.alt_platforms.into_owned()),
            code_sign_key: self.code_sign_key.map(owned),
            cross_project_id: self.cross_project_id.map(owned),
            client_brand: self.client_brand.map(owned),
            host_info: self.host_info.into_owned(),
            coprocs: self.coprocs.into_iter().map(GpuReport::into_owned).collect(),
            results: self.results.into_iter().map(ReportedResult::into_owned).collect(),
            app_versions: self
                .app_versions
                .into_iter()
                .map(AppVersionDescription::into_owned)
                .collect(),
            other_results: self.other_results.into_iter().map(OtherResult::into_owned).collect(),
            in_progress_results: self
                .in_progress_results
                .map(|list| list.into_iter().map(InProgressResult::into_owned).collect()),
            ..self
        }
    }

    /// The GPU entry for `resource`, if the request lists that type.
    pub fn gpu(&self, resource: ResourceType) -> Option<&GpuReport<'a>> {
        self.coprocs.iter().find(|g| g.resource == resource)
    }

    /// Instance-seconds of `resource`'s work asked for.
    pub fn req_secs(&self, resource: ResourceType) -> f64 {
        match resource {
            ResourceType::Cpu => self.cpu_req_secs,
            gpu => self.gpu(gpu).map_or(0.0, |g| g.req_secs),
        }
    }

    /// Instances of `resource` to keep busy.
    pub fn req_instances(&self, resource: ResourceType) -> f64 {
        match resource {
            ResourceType::Cpu => self.cpu_req_instances,
            gpu => self.gpu(gpu).map_or(0.0, |g| g.req_instances),
        }
    }

    /// Whether any of `resource`'s work is asked for.
    pub fn requests(&self, resource: ResourceType) -> bool {
        self.req_secs(resource) > 0.0 || self.req_instances(resource) > 0.0
    }

    /// Instances of `resource` the client may use, as a server works it out: the CPUs
    /// under the working preferences' limits, the GPUs as listed.
    pub fn usable_instances(&self, resource: ResourceType) -> u32 {
        match resource {
            ResourceType::Cpu => match &self.working_global_preferences {
                Some(prefs) => prefs.usable_cpus(self.host_info.p_ncpus),
                None => Prefs::default().usable_cpus(self.host_info.p_ncpus),
            },
            gpu => self.gpu(gpu).map_or(0, |g| g.count),
        }
    }

    /// Reads a request; errors name "scheduler request" and the line.
    pub fn from_xml(text: &str) -> Result<SchedulerRequest<'static>, XmlError> {
        const NAME: &str = "scheduler request";
        let root = parse_message(text).map_err(|e| e.in_file(NAME))?;
        Self::parse(&root).map_err(|e| e.in_file(NAME))
    }

    fn parse(root: &Element) -> Result<SchedulerRequest<'static>, XmlError> {
        if root.name != "scheduler_request" {
            return Err(root.error(XmlProblem::WrongRoot { expected: "scheduler_request" }));
        }
        let mut request = SchedulerRequest::default();
        let mut counted = ListCounts::default();
        for child in &root.children {
            match child.name.as_str() {
                "authenticator" => request.authenticator = Cow::Owned(child.string()),
                "hostid" => request.hostid = child.u64()?,
                "rpc_seqno" => request.rpc_seqno = child.u64()?,
                "core_client_major_version" => request.client_version.major = child.u32()?,
                "core_client_minor_version" => request.client_version.minor = child.u32()?,
                "core_client_release" => request.client_version.release = child.u32()?,
                "resource_share_fraction" => request.resource_share_fraction = child.f64()?,
                "rrs_fraction" => request.rrs_fraction = child.f64()?,
                "prrs_fraction" => request.prrs_fraction = child.f64()?,
                "duration_correction_factor" => request.duration_correction_factor = child.f64()?,
                "allow_multiple_clients" => request.allow_multiple_clients = child.flag()?,
                "sandbox" => request.sandbox = child.flag()?,
                "dont_send_work" => request.dont_send_work = child.flag()?,
                "work_req_seconds" => request.work_req_seconds = child.non_negative_f64()?,
                "cpu_req_secs" => request.cpu_req_secs = child.non_negative_f64()?,
                "cpu_req_instances" => request.cpu_req_instances = child.non_negative_f64()?,
                "estimated_delay" => request.estimated_delay = child.f64()?,
                "client_cap_plan_class" => request.client_cap_plan_class = child.flag()?,
                "platform_name" => request.platform_name = Cow::Owned(child.string()),
                "alt_platform" => {
                    counted.check(child, "alt_platform", MAX_GPU_TYPES)?;
                    let name = child.required_text("name")?.to_owned();
                    request.alt_platforms.to_mut().push(name);
                }
                "code_sign_key" => request.code_sign_key = Some(Cow::Owned(child.string())),
                "working_global_preferences" if child.child("global_preferences").is_some() => {
                    let mut prefs = Prefs::default();
                    apply_prefs(child, &mut prefs)?;
                    request.working_global_preferences = Some(prefs);
                }
                "cross_project_id" => {
                    request.cross_project_id = Some(Cow::Owned(child.string()));
                }
                "client_brand" => request.client_brand = Some(Cow::Owned(child.string())),
                "time_stats" => request.time_stats = TimeStatsReport::parse(child)?,
                "net_stats" => request.net_stats = parse_net_stats(child)?,
                "host_info" => request.host_info = HostInfo::parse(child)?,
                "disk_usage" => request.disk_usage = DiskUsageReport::parse(child)?,
                "coprocs" => {
                    for gpu in &child.children {
                        counted.check(gpu, "coprocs entry", MAX_GPU_TYPES)?;
                        request.coprocs.extend(GpuReport::parse(gpu)?);
                    }
                }
                "result" => {
                    counted.check(child, "result", MAX_LISTED)?;
                    request.results.push(ReportedResult::parse(child)?);
                }
                "file_info" => {
                    counted.check(child, "file_info", MAX_LISTED)?;
                    request.sticky_files.push(StickyFile::parse(child)?);
                }
                "app_versions" => {
                    for version in child.children.iter().filter(|c| c.name == "app_version") {
                        counted.check(version, "app_version", MAX_LISTED)?;
                        request.app_versions.push(AppVersionDescription::parse(version)?);
                    }
                }
                "other_results" => {
                    for other in child.children.iter().filter(|c| c.name == "other_result") {
                        counted.check(other, "other_result", MAX_LISTED)?;
                        request.other_results.push(OtherResult::parse(other)?);
                    }
                }
                "in_progress_results" => {
                    let mut results = Vec::new();
                    for result in child.children.iter().filter(|c| c.name == "ip_result") {
                        counted.check(result, "ip_result", MAX_LISTED)?;
                        results.push(InProgressResult::parse(result)?);
                    }
                    request.in_progress_results = Some(results);
                }
                _ => {}
            }
        }
        Ok(request)
    }

    /// What the request says about the host, as it is written in it: `<host_info>`,
    /// then `<coprocs>` where there are GPUs (`boinc-rs host-info` shows it).
    pub fn host_xml(&self) -> String {
        let mut w = XmlWriter::new();
        self.host_info.write(&mut w);
        self.write_coprocs(&mut w);
        w.finish()
    }

    fn write_coprocs(&self, w: &mut XmlWriter) {
        if !self.coprocs.is_empty() {
            w.open("coprocs");
            for gpu in &self.coprocs {
                gpu.write(w);
            }
            w.close("coprocs");
        }
    }

    /// The request as the real client writes it.
    pub fn to_xml(&self) -> String {
        let mut w = XmlWriter::new();
        w.open("scheduler_request");
        w.text("authenticator", &self.authenticator);
        w.integer("hostid", self.hostid);
        w.integer("rpc_seqno", self.rpc_seqno);
        w.integer("core_client_major_version", self.client_version.major);
        w.integer("core_client_minor_version", self.client_version.minor);
        w.integer("core_client_release", self.client_version.release);
        w.number("resource_share_fraction", self.resource_share_fraction);
        w.number("rrs_fraction", self.rrs_fraction);
        w.number("prrs_fraction", self.prrs_fraction);
        w.number("duration_correction_factor", self.duration_correction_factor);
        w.flag("allow_multiple_clients", self.allow_multiple_clients);
        w.flag("sandbox", self.sandbox);
        w.flag("dont_send_work", self.dont_send_work);
        w.number("work_req_seconds", self.work_req_seconds);
        w.number("cpu_req_secs", self.cpu_req_secs);
        w.number("cpu_req_instances", self.cpu_req_instances);
        w.number("estimated_delay", self.estimated_delay);
        w.flag("client_cap_plan_class", self.client_cap_plan_class);
        w.text("platform_name", &self.platform_name);
        for platform in self.alt_platforms.iter() {
            w.open("alt_platform");
            w.text("name", platform);
            w.close("alt_platform");
        }
        if let Some(key) = &self.code_sign_key {
            w.block("code_sign_key", key);
        }
        if let Some(prefs) = &self.working_global_preferences {
            w.open("working_global_preferences");
            write_prefs(prefs, &mut w);
            w.close("working_global_preferences");
        }
        if let Some(cpid) = &self.cross_project_id {
            w.text("cross_project_id", cpid);
        }
        self.time_stats.write(&mut w);
        write_net_stats(&self.net_stats, &mut w);
        self.host_info.write(&mut w);
        self.disk_usage.write(&mut w);
        self.write_coprocs(&mut w);
        let version = self.client_version.to_string();
        for result in &self.results {
            result.write(&mut w, &version);
        }
        for file in &self.sticky_files {
            file.write(&mut w);
        }
        w.open("app_versions");
        for version in &self.app_versions {
            version.write(&mut w, false);
        }
        w.close("app_versions");
        w.open("other_results");
        for other in &self.other_results {
            other.write(&mut w);
        }
        w.close("other_results");
        if let Some(results) = &self.in_progress_results {
            w.open("in_progress_results");
            for result in results {
                result.write(&mut w);
            }
            w.close("in_progress_results");
        }
        if let Some(brand) = &self.client_brand {
            w.text("client_brand", brand);
        }
        w.close("scheduler_request");
        w.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_the_element_and_line() {
        let error = SchedulerRequest::from_xml(
            "<scheduler_request>\n<hostid>-3</hostid>\n</scheduler_request>",
        )
        .expect_err("negative id");
        assert_eq!((error.file.as_str(), error.line), ("scheduler request", 2));
        assert_eq!(error.element.as_deref(), Some("hostid"));
        let error = SchedulerRequest::from_xml("<scheduler_reply/>").expect_err("root");
        assert_eq!(error.problem, XmlProblem::WrongRoot { expected: "scheduler_request" });
        let many = "<other_result><name>r</name></other_result>".repeat(MAX_LISTED + 1);
        let text =
            format!("<scheduler_request><other_results>{many}</other_results></scheduler_request>");
        let error = SchedulerRequest::from_xml(&text).expect_err("too many");
        assert_eq!(
            error.problem,
            XmlProblem::TooMany { element: "other_result", limit: MAX_LISTED }
        );
    }

    #[test]
    fn a_server_reads_the_work_asked_and_the_usable_instances() {
        let request = SchedulerRequest::from_xml(
            "<scheduler_request><cpu_req_secs>100</cpu_req_secs>\
             <working_global_preferences><global_preferences><max_ncpus_pct>50</max_ncpus_pct>\
             </global_preferences></working_global_preferences>\
             <host_info><p_ncpus>8</p_ncpus></host_info>\
             <coprocs><coproc_ati><count>2</count><req_instances>1</req_instances></coproc_ati>\
             <coproc_apple><count>1</count></coproc_apple></coprocs></scheduler_request>",
        )
        .expect("valid");
        assert_eq!(request.usable_instances(ResourceType::Cpu), 4);
        assert_eq!(request.usable_instances(ResourceType::Amd), 2);
        assert_eq!(request.usable_instances(ResourceType::Nvidia), 0);
        assert!(request.requests(ResourceType::Cpu) && request.requests(ResourceType::Amd));
        assert!(!request.requests(ResourceType::Intel));
        assert_eq!(request.coprocs.len(), 1, "an unknown GPU type is skipped");
    }
}
