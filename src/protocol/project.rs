//! `<project>` of client_state.xml: the RPC timing of seed 002 (min_rpc_time, failure
//! counts), the debts of seed 000/001, the per-resource backoff and "no apps for this
//! resource" state of seed 003, recent estimated credit, seed 004's deletion policy
//! (`<deletion_policy_priority/>`, `<deletion_policy_expire/>`, `<delete_from_self/>`) and
//! the emulator's `<available>` server up/down process; and what scheduler requests
//! carry: the authenticator (when the file holds it; the real client keeps it in the
//! account file, see [`crate::protocol::parse_account`]), host id, RPC sequence number,
//! account names and ids and the code-signing key.

use super::client_state_writer::OWN_FIELDS;
use super::error::{XmlError, XmlProblem};
use super::xml_tree::Element;
use crate::model::{Availability, Project, ResourceType};

/// BOINC's resource share when the file gives none.
const DEFAULT_RESOURCE_SHARE: f64 = 100.0;

/// Reads one `<project>`. A project without `<project_name>` (one that never completed
/// an RPC) is named by its master URL.
pub(crate) fn parse_project(element: &Element) -> Result<Project, XmlError> {
    let mut project = Project::new("", "", DEFAULT_RESOURCE_SHARE);
    let mut name = String::new();
    let mut master_url = None;
    for child in &element.children {
        match child.name.as_str() {
            "master_url" => master_url = Some(child.string()),
            "project_name" => name = child.string(),
            "authenticator" => project.authenticator = child.string(),
            "hostid" => project.hostid = child.u64()?,
            "rpc_seqno" => project.rpc_seqno = child.u64()?,
            "user_name" => project.user_name = child.string(),
            "team_name" => project.team_name = child.string(),
            "host_venue" => project.host_venue = child.string(),
            "userid" => project.userid = child.u64()?,
            "teamid" => project.teamid = child.u64()?,
            "cross_project_id" => project.cross_project_id = child.string(),
            "njobs_success" => project.njobs_success = child.u64()?,
            "njobs_error" => project.njobs_error = child.u64()?,
            "elapsed_time" => project.elapsed_time = child.non_negative_f64()?,
            "code_sign_key" => {
                let key = child.string();
                project.code_sign_key = (!key.is_empty()).then_some(key);
            }
            "resource_share" => project.resource_share = child.non_negative_f64()?,
            "suspended_via_gui" => project.suspended = child.flag()?,
            "dont_request_more_work" => project.dont_request_more_work = child.flag()?,
            "detach_when_done" => project.detach_when_done = child.flag()?,
            "master_url_fetch_pending" => project.master_fetch_pending = child.flag()?,
            "min_rpc_time" => project.min_rpc_time = child.f64()?,
            "nrpc_failures" => project.nrpc_failures = child.u32()?,
            "master_fetch_failures" => project.master_fetch_failures = child.u32()?,
            "last_rpc_time" => project.last_rpc_time = child.f64()?,
            // BOINC writes the reason for the pending RPC; any reason means pending.
            "sched_rpc_pending" => project.sched_rpc_pending = child.flag()?,
            "scheduler_url" => {
                let url = child.string();
                if !url.is_empty() {
                    project.scheduler_urls.push(url);
                }
            }
            "non_cpu_intensive" => project.non_cpu_intensive = child.flag()?,
            "dont_use_dcf" => project.dont_use_dcf = child.flag()?,
            "duration_correction_factor" => {
                project.duration_correction_factor =
                    child.f64_in(f64::MIN_POSITIVE, f64::MAX, "greater than 0")?
            }
            "rec" => project.rec = child.non_negative_f64()?,
            "rec_time" => project.rec_time = child.f64()?,
            "short_term_debt" => project.short_term_debt = child.f64()?,
            // Clients before per-resource debts kept one long-term debt: the CPU's.
            "long_term_debt" => {
                project.resources[ResourceType::Cpu].long_term_debt = child.f64()?
            }
            "rsc_backoff_time" => {
                if let Some((resource, value)) = resource_value(child)? {
                    project.resources[resource].backoff_time = value;
                }
            }
            "rsc_backoff_interval" => {
                if let Some((resource, value)) = resource_value(child)? {
                    if value < 0.0 {
                        return Err(child.error(XmlProblem::OutOfRange {
                            value: value.to_string(),
                            expected: "zero or more",
                        }));
                    }
                    project.resources[resource].backoff_interval = value;
                }
            }
            "no_rsc_apps" => {
                if let Some(resource) = ResourceType::from_boinc_name(child.trimmed()) {
                    project.resources[resource].no_apps = true;
                }
            }
            "no_cpu_apps" => project.resources[ResourceType::Cpu].no_apps = child.flag()?,
            "no_cuda_apps" => project.resources[ResourceType::Nvidia].no_apps = child.flag()?,
            "no_ati_apps" => project.resources[ResourceType::Amd].no_apps = child.flag()?,
            "no_intel_gpu_apps" => project.resources[ResourceType::Intel].no_apps = child.flag()?,
            "available" => project.availability = Some(parse_availability(child)?),
            "deletion_policy_priority" => project.deletion_policy.priority = child.flag()?,
            "deletion_policy_expire" => project.deletion_policy.expire = child.flag()?,
            "delete_from_self" => project.deletion_policy.delete_from_self = child.flag()?,
            "user_total_credit" => project.account.user_total_credit = child.f64()?,
            "user_expavg_credit" => project.account.user_expavg_credit = child.f64()?,
            "host_total_credit" => project.account.host_total_credit = child.f64()?,
            "host_expavg_credit" => project.account.host_expavg_credit = child.f64()?,
            "attached_via_acct_mgr" => project.account.attached_via_acct_mgr = child.flag()?,
            OWN_FIELDS => parse_own_fields(child, &mut project)?,
            _ => {}
        }
    }
    let master_url = master_url
        .filter(|url| !url.is_empty())
        .ok_or_else(|| element.error(XmlProblem::Missing("master_url")))?;
    project.name = if name.is_empty() { master_url.clone() } else { name };
    project.master_url = master_url;
    Ok(project)
}

/// Reads the project's fields BOINC has no element for, which boinc-rs writes inside
/// `<boinc_rs>` (see [`crate::protocol::write_client_state`]).
fn parse_own_fields(element: &Element, project: &mut Project) -> Result<(), XmlError> {
    for child in &element.children {
        match child.name.as_str() {
            "detached" => project.detached = child.flag()?,
            "last_rpc_failure" => project.last_rpc_failure = Some(child.f64()?),
            "latency_limited_until" => project.latency_limited_until = Some(child.f64()?),
            "exp_avg_cpu" => project.exp_avg_cpu = child.f64()?,
            "exp_avg_time" => project.exp_avg_time = child.f64()?,
            "app_failures" => project.app_failures = child.u32()?,
            "resource" => {
                let name = child.required_text("name")?;
                // A resource type this build does not know is a newer client's: skipped.
                let Some(resource) = ResourceType::from_boinc_name(name) else { continue };
                let state = &mut project.resources[resource];
                for field in &child.children {
                    match field.name.as_str() {
                        "long_term_debt" => state.long_term_debt = field.f64()?,
                        "accumulate_debt" => state.accumulate_debt = field.flag()?,
                        "has_app_version" => state.has_app_version = field.flag()?,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Reads a `<name>RESOURCE</name><value>X</value>` pair; `None` for a resource type the
/// model doesn't know (a newer client's GPU type), which is then ignored.
fn resource_value(element: &Element) -> Result<Option<(ResourceType, f64)>, XmlError> {
    let name = element.child("name").ok_or_else(|| element.error(XmlProblem::Missing("name")))?;
    let value =
        element.child("value").ok_or_else(|| element.error(XmlProblem::Missing("value")))?;
    let value = value.f64()?;
    Ok(ResourceType::from_boinc_name(name.trimmed()).map(|resource| (resource, value)))
}

/// Reads the emulator's `<available><frac/><lambda/></available>`; BOINC's emulator
/// needs both, so a missing one is an error rather than a silent "always up".
fn parse_availability(element: &Element) -> Result<Availability, XmlError> {
    let frac = element.child("frac").ok_or_else(|| element.error(XmlProblem::Missing("frac")))?;
    let lambda =
        element.child("lambda").ok_or_else(|| element.error(XmlProblem::Missing("lambda")))?;
    Ok(Availability {
        frac: frac.f64_in(0.0, 1.0, "between 0 and 1")?,
        lambda: lambda.f64_in(f64::MIN_POSITIVE, f64::MAX, "greater than 0")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::xml_tree::parse_document;

    fn project(xml: &str) -> Result<Project, XmlError> {
        parse_project(&parse_document(xml).expect("well-formed"))
    }

    #[test]
    fn defaults_and_name_from_url() {
        let p =
            project("<project><master_url> http://x.org/ </master_url></project>").expect("valid");
        assert_eq!(p.name, "http://x.org/");
        assert_eq!(p.master_url, "http://x.org/");
        assert_eq!(p.resource_share, 100.0);
    }

    #[test]
    fn per_resource_state() {
        let p = project(
            "<project><master_url>u</master_url>\
             <rsc_backoff_time><name>CPU</name><value>1795249438.9</value></rsc_backoff_time>\
             <rsc_backoff_interval><name>NVIDIA</name><value>600</value></rsc_backoff_interval>\
             <rsc_backoff_time><name>apple_gpu</name><value>5</value></rsc_backoff_time>\
             <no_rsc_apps>ATI</no_rsc_apps><no_intel_gpu_apps/>\
             <long_term_debt>-30</long_term_debt>\
             <available><frac>0.3</frac><lambda>14400</lambda></available></project>",
        )
        .expect("valid");
        assert_eq!(p.resources[ResourceType::Cpu].backoff_time, 1795249438.9);
        assert_eq!(p.resources[ResourceType::Cpu].long_term_debt, -30.0);
        assert_eq!(p.resources[ResourceType::Nvidia].backoff_interval, 600.0);
        assert!(p.resources[ResourceType::Amd].no_apps);
        assert!(p.resources[ResourceType::Intel].no_apps);
        assert!(!p.resources[ResourceType::Nvidia].no_apps);
        assert_eq!(p.availability, Some(Availability { frac: 0.3, lambda: 14400.0 }));
    }

    #[test]
    fn errors() {
        assert_eq!(
            project("<project><project_name>x</project_name></project>")
                .expect_err("no url")
                .problem,
            XmlProblem::Missing("master_url")
        );
        assert_eq!(
            project(
                "<project><master_url>u</master_url><available><frac>1</frac></available></project>"
            )
            .expect_err("no lambda")
            .problem,
            XmlProblem::Missing("lambda")
        );
        let error = project(
            "<project><master_url>u</master_url>\n<resource_share>-1</resource_share></project>",
        )
        .expect_err("negative share");
        assert_eq!((error.line, error.element.as_deref()), (2, Some("resource_share")));
    }
}
