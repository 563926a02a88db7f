//! BOINC 7.20.5 on the anonymous platform against `boinc-rs project-server`, beside
//! boinc-rs (docs/design.md "Anonymous platform"): Debian's `boinc`, given the same
//! app_info.xml and copy of the example app as boinc-rs's own test
//! (service/anonymous_platform.rs), is attached with `boinccmd --project_attach`; the
//! server sends it jobs naming its declared version and no app, it runs them with the
//! volunteer's executable, uploads and reports them, and never downloads the served
//! app. The request it sent (its sched_request file) says `anonymous` and lists the
//! same app versions, element for element, as the request boinc-rs makes from the same
//! app_info.xml.
//!
//! Compiled as ignored, with the reason, where the real client is not installed (see
//! crates/boinc-rs/build.rs).

use crate::project_server_real_client::{RealClient, attach};
use crate::support;

use boinc_core::control::{ClientIdentity, RpcCall, build_request, take_app_info, usable_app_info};
use boinc_core::model::{ClientState, Project, ProjectId, ResourceMap, ResourceType};
use boinc_core::protocol::data_dir::escape_project_url;
use boinc_core::protocol::{SchedulerRequest, read_app_info};
use boinc_core::work_fetch::{ResourceRequest, WorkRequest};
use std::time::Duration;
use support::project_server::{ProjectServerProcess, files_under};
use support::volunteer_apps::{app_info, process_running, volunteer_project};
use support::wait::poll_for;

/// How long the exchange may take: two jobs of two CPU seconds on a busy machine, no
/// app to download.
const EXCHANGE_WAIT: Duration = Duration::from_secs(240);

/// The request boinc-rs makes of the project at `url` on a host of `p_fpops` with the
/// volunteer's app_info.xml.
fn boinc_rs_request(url: &str, p_fpops: f64) -> SchedulerRequest<'static> {
    let mut state = ClientState::default();
    state.host.p_fpops = p_fpops;
    state.projects.push(Project::new("p", url, 100.0));
    let info = read_app_info(&app_info(), "app_info.xml").expect("the volunteer's file reads");
    let (info, missing) = usable_app_info(info, |_| Some(1));
    assert!(missing.is_empty(), "{missing:?}");
    take_app_info(&mut state, ProjectId(0), &info);
    let mut resources = ResourceMap::<ResourceRequest>::default();
    resources[ResourceType::Cpu] = ResourceRequest { req_seconds: 1.0, req_ninstances: 0.0 };
    let call = RpcCall {
        request: WorkRequest { project: ProjectId(0), resources, work_req_seconds: 1.0 },
        reported: Vec::new(),
        estimated_delay: ResourceMap::default(),
    };
    let identity = ClientIdentity::default();
    let request = build_request(&state, &call, &identity, 0.0);
    SchedulerRequest::from_xml(&request.to_xml()).expect("boinc-rs's request reads")
}

#[test]
#[cfg_attr(
    not(peer_boinc),
    ignore = "the real BOINC client is not installed: apt-get install boinc-client"
)]
fn the_real_client_runs_the_volunteers_app_and_asks_as_boinc_rs_does() {
    let project =
        ProjectServerProcess::start(&["--jobs", "2", "--job-seconds", "2", "--request-delay", "1"]);
    let client = RealClient::start();
    let project_dir = client.dir.path().join("projects").join(escape_project_url(&project.url));
    let own = volunteer_project(&project_dir, &app_info());
    attach(&client, &project);
    let ran = poll_for(EXCHANGE_WAIT, || process_running(&own));
    let status = project.wait_for_or(
        "the real client to finish two jobs with the volunteer's app",
        EXCHANGE_WAIT,
        |s| s["results_validated"].as_u64() == Some(2),
        || format!("client log:\n{}\nserver log:\n{}", client.log(), project.log()),
    );
    assert!(ran.is_some(), "no process ran {}: {}", own.display(), client.log());
    assert_eq!(status["uploads_completed"], 2, "{status:#}");
    let served = status["apps"][0]["file"].as_str().expect("the served app's file");
    let downloaded: Vec<_> = files_under(client.dir.path())
        .into_iter()
        .filter(|path| path.file_name().is_some_and(|name| name == served))
        .collect();
    assert!(downloaded.is_empty(), "the real client downloaded the app: {downloaded:?}");
    assert!(own.exists(), "the volunteer's app is kept");

    // Its last request, beside boinc-rs's from the same app_info.xml.
    let file =
        client.dir.path().join(format!("sched_request_{}.xml", escape_project_url(&project.url)));
    let text = std::fs::read_to_string(&file).expect("the real client's last request");
    let theirs = SchedulerRequest::from_xml(&text).expect("the real client's request reads");
    let ours = boinc_rs_request(&project.url, theirs.host_info.p_fpops);
    assert_eq!(theirs.platform_name, "anonymous");
    assert_eq!(ours.platform_name, theirs.platform_name);
    assert!(theirs.alt_platforms.is_empty() && ours.alt_platforms.is_empty());
    assert_eq!(ours.app_versions, theirs.app_versions, "boinc-rs's versions beside BOINC's");
}
