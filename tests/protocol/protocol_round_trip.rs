//! What boinc-rs writes reads back to the same value: scheduler requests and replies
//! generated over every field, with text that needs escaping, CDATA that contains its own
//! end marker, and numbers of every magnitude.

use boinc_core::model::{CudaProperties, Prefs, ReportedPrefs, ResourceMap, ResourceType};
use boinc_core::protocol::{
    AppDescription, AppVersionDescription, ClientVersion, CoprocessorUsage, DiskUsageReport,
    FileDescription, FileReference, GpuReport, HostInfo, InProgressResult, MessagePriority,
    OtherResult, OutputFile, ReportedResult, ResultDescription, RssFeed, SchedulerReply,
    SchedulerRequest, ServerMessage, StickyFile, TimeStatsReport, WorkunitDescription,
};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use std::borrow::Cow;

use crate::strategies;
use strategies::*;

/// Preferences as a server sends them: markup, kept verbatim.
fn raw_preferences() -> impl Strategy<Value = String> {
    vec((0u32..3, 0.0f64..10.0), 0..4).prop_map(|items| {
        items
            .into_iter()
            .map(|(kind, value)| match kind {
                0 => format!("\n<work_buf_min_days>{value}</work_buf_min_days>"),
                1 => format!(
                    "<venue name=\"home\"><cpu_usage_limit>{value}</cpu_usage_limit></venue>"
                ),
                _ => "<!-- note -->".to_owned(),
            })
            .collect()
    })
}

fn percent() -> impl Strategy<Value = f64> {
    0.0f64..=100.0
}

fn prefs() -> impl Strategy<Value = Prefs> {
    (
        // Within the bounds a preferences file may hold (protocol/prefs.rs).
        (0.0..10.0f64, 0.0..10.0f64, 0.0..100_000.0f64, percent(), any::<u32>(), any::<bool>()),
        (percent(), percent(), percent(), any::<bool>(), any::<bool>()),
        (0.0..1e9f64, percent(), 0.0..1e9f64, any::<bool>(), 0.0..100_000.0f64, 1.0..86_400.0f64),
        (text(), 0.0..24.0f64, percent(), any::<bool>(), 0.0..1e9f64, any::<u32>()),
    )
        .prop_map(|(a, b, c, d)| Prefs {
            work_buf_min_days: a.0,
            work_buf_additional_days: a.1,
            cpu_scheduling_period_minutes: a.2,
            max_ncpus_pct: a.3,
            max_ncpus: a.4,
            leave_apps_in_memory: a.5,
            ram_max_used_busy_pct: b.0,
            ram_max_used_idle_pct: b.1,
            cpu_usage_limit: b.2,
            run_if_user_active: b.3,
            run_gpu_if_user_active: b.4,
            disk_max_used_gb: c.0,
            disk_max_used_pct: c.1,
            disk_min_free_gb: c.2,
            run_on_batteries: c.3,
            idle_time_to_run: c.4,
            disk_interval: c.5,
            reported: ReportedPrefs {
                source_project: d.0,
                start_hour: d.1,
                net_end_hour: d.1,
                suspend_cpu_usage: d.2,
                vm_max_used_pct: d.2,
                network_wifi_only: d.3,
                confirm_before_connecting: !d.3,
                max_bytes_sec_up: d.4,
                daily_xfer_period_days: d.5,
                ..ReportedPrefs::default()
            },
        })
}

fn host_info() -> impl Strategy<Value = HostInfo<'static>> {
    (
        host_description(),
        (
            any::<u32>(),
            non_negative(),
            non_negative(),
            non_negative(),
            non_negative(),
            non_negative(),
            any::<u32>(),
        ),
    )
        .prop_map(|(description, c)| HostInfo {
            description: Cow::Owned(description),
            p_ncpus: c.0,
            p_fpops: c.1,
            m_nbytes: c.2,
            m_swap: c.3,
            d_total: c.4,
            d_free: c.5,
            n_usable_coprocs: c.6,
        })
}

fn time_stats() -> impl Strategy<Value = TimeStatsReport> {
    ((fraction(), -1.0f64..=1.0, fraction(), fraction(), fraction()), vec(option::of(number()), 9))
        .prop_map(|(f, d)| TimeStatsReport {
            on_frac: f.0,
            connected_frac: f.1,
            cpu_and_network_available_frac: f.2,
            active_frac: f.3,
            gpu_active_frac: f.4,
            client_start_time: d[0],
            total_start_time: d[1],
            total_duration: d[2],
            total_active_duration: d[3],
            total_gpu_active_duration: d[4],
            now: d[5],
            previous_uptime: d[6],
            session_active_duration: d[7],
            session_gpu_active_duration: d[8],
        })
}

/// BOINC's three figures: seed 004's free-space figures travel in memory only, never
/// in the text (BOINC's scheduler does not parse them).
fn disk_usage() -> impl Strategy<Value = DiskUsageReport> {
    (non_negative(), non_negative(), non_negative()).prop_map(|u| DiskUsageReport {
        d_boinc_used_total: u.0,
        d_boinc_used_project: u.1,
        d_project_share: u.2,
        free_space: None,
    })
}

fn gpu_report() -> impl Strategy<Value = GpuReport<'static>> {
    (
        gpu(),
        any::<u32>(),
        text(),
        non_negative(),
        non_negative(),
        non_negative(),
        non_negative(),
        number(),
        (1u32..100_000, 1u32..100_000, (1i32..10, 0i32..10)),
        proptest::option::of(cuda_properties()),
    )
        .prop_map(|g| GpuReport {
            resource: g.0,
            count: g.1,
            name: g.2.into(),
            available_ram: g.3,
            peak_flops: g.4,
            req_secs: g.5,
            req_instances: g.6,
            estimated_delay: g.7,
            // The NVIDIA driver's figures are written for NVIDIA GPUs only.
            cuda_version: if g.0 == ResourceType::Nvidia { g.8.0 } else { 0 },
            driver_version: if g.0 == ResourceType::Nvidia { g.8.1 } else { 0 },
            compute_capability: if g.0 == ResourceType::Nvidia { g.8.2 } else { (0, 0) },
            cuda_properties: g.9.filter(|_| g.0 == ResourceType::Nvidia),
            opencl: None,
        })
}

/// CUDA properties in the ranges drivers give (whole bytes, positive limits).
fn cuda_properties() -> impl Strategy<Value = CudaProperties> {
    (
        (bytes(), bytes(), bytes(), bytes(), bytes()),
        (0i32..1 << 20, 0i32..64, 0i32..4096, 0i32..4_000_000, 0i32..1024),
        ([0i32..i32::MAX, 0..i32::MAX, 0..i32::MAX], [0i32..4096, 0..4096, 0..4096]),
        any::<bool>(),
    )
        .prop_map(|(b, i, (grid, threads), overlap)| CudaProperties {
            total_global_mem: b.0,
            shared_mem_per_block: b.1,
            regs_per_block: i.0,
            warp_size: i.1,
            mem_pitch: b.2,
            max_threads_per_block: i.2,
            max_threads_dim: threads,
            max_grid_size: grid,
            clock_rate_khz: i.3,
            total_const_mem: b.3,
            texture_alignment: b.4,
            device_overlap: overlap,
            multiprocessor_count: i.4,
        })
}

/// A size in whole bytes, as BOINC writes peaks.
fn bytes() -> impl Strategy<Value = f64> {
    (0u64..1 << 50).prop_map(|b| b as f64)
}

fn reported_result() -> impl Strategy<Value = ReportedResult<'static>> {
    let output =
        (name(), non_negative(), non_negative(), text(), vec(name(), 0..3)).prop_map(|o| {
            OutputFile {
                name: o.0.into(),
                nbytes: o.1,
                max_nbytes: o.2,
                md5_cksum: o.3.into(),
                upload_urls: o.4.into(),
            }
        });
    (
        (name(), non_negative(), non_negative(), any::<i32>(), any::<i64>(), text(), any::<u32>()),
        (
            text(),
            option::of(bytes()),
            option::of(bytes()),
            option::of(bytes()),
            option::of(any::<u32>()),
        ),
        (stderr(), vec(output, 0..3)),
    )
        .prop_map(|(a, b, c)| ReportedResult {
            name: a.0.into(),
            final_cpu_time: a.1,
            final_elapsed_time: a.2,
            exit_status: a.3,
            state: a.4,
            platform: a.5.into(),
            version_num: a.6,
            plan_class: b.0.into(),
            final_peak_working_set_size: b.1,
            final_peak_swap_size: b.2,
            final_peak_disk_usage: b.3,
            app_version_num: b.4,
            stderr_out: c.0.into(),
            output_files: c.1,
        })
}

fn file_ref() -> impl Strategy<Value = FileReference> {
    (name(), text(), any::<bool>(), any::<bool>()).prop_map(|r| FileReference {
        file_name: r.0,
        open_name: r.1,
        main_program: r.2,
        copy_file: r.3,
    })
}

fn app_version(with_files: bool) -> impl Strategy<Value = AppVersionDescription<'static>> {
    let coprocessor =
        (name(), non_negative()).prop_map(|c| CoprocessorUsage { kind: c.0.into(), count: c.1 });
    let files = if with_files { 0..3usize } else { 0..1usize };
    (
        (name(), any::<u32>(), text(), text(), text()),
        (option::of(non_negative()), option::of(non_negative()), option::of(non_negative())),
        (text(), option::of(coprocessor), vec(file_ref(), files)),
    )
        .prop_map(move |(a, b, c)| AppVersionDescription {
            app_name: a.0.into(),
            version_num: a.1,
            platform: a.2.into(),
            plan_class: a.3.into(),
            api_version: a.4.into(),
            avg_ncpus: b.0,
            max_ncpus: b.1,
            flops: b.2,
            cmdline: c.0.into(),
            coprocessor: c.1,
            // A request lists versions without their files, as the real client does.
            file_refs: if with_files { c.2 } else { Vec::new() },
            duration_correction_factor: None,
        })
}

fn in_progress_result() -> impl Strategy<Value = InProgressResult<'static>> {
    (name(), number(), non_negative(), non_negative(), option::of((gpu(), 0.001f64..100.0)))
        .prop_map(|r| InProgressResult {
            name: r.0.into(),
            report_deadline: r.1,
            time_remaining: r.2,
            avg_ncpus: r.3,
            gpu: r.4,
        })
}

fn request() -> impl Strategy<Value = SchedulerRequest<'static>> {
    let version = (any::<u32>(), any::<u32>(), any::<u32>())
        .prop_map(|(major, minor, release)| ClientVersion { major, minor, release });
    let other = (name(), any::<i32>(), text()).prop_map(|o| OtherResult {
        name: o.0.into(),
        app_version: o.1,
        plan_class: o.2.into(),
    });
    let sticky = (name(), non_negative(), any::<i64>()).prop_map(|s| StickyFile {
        name: s.0,
        nbytes: s.1,
        status: s.2,
    });
    (
        (text(), id(), id(), version, number(), number(), number(), number()),
        (
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            non_negative(),
            non_negative(),
            non_negative(),
            number(),
            any::<bool>(),
        ),
        (
            text(),
            vec(name(), 0..3),
            option::of(hex_block()),
            option::of(prefs()),
            option::of(text()),
        ),
        (time_stats(), net_stats(), host_info(), disk_usage(), vec(gpu_report(), 0..3)),
        (vec(reported_result(), 0..3), vec(sticky, 0..3), vec(app_version(false), 0..3)),
        (vec(other, 0..3), option::of(vec(in_progress_result(), 0..4))),
    )
        .prop_map(|(a, b, c, d, e, f)| SchedulerRequest {
            authenticator: a.0.into(),
            hostid: a.1,
            rpc_seqno: a.2,
            client_version: a.3,
            resource_share_fraction: a.4,
            rrs_fraction: a.5,
            prrs_fraction: a.6,
            duration_correction_factor: a.7,
            allow_multiple_clients: b.0,
            sandbox: b.1,
            dont_send_work: b.2,
            work_req_seconds: b.3,
            cpu_req_secs: b.4,
            cpu_req_instances: b.5,
            estimated_delay: b.6,
            client_cap_plan_class: b.7,
            platform_name: c.0.into(),
            alt_platforms: c.1.into(),
            code_sign_key: c.2.map(Cow::Owned),
            working_global_preferences: c.3,
            cross_project_id: c.4.map(Cow::Owned),
            time_stats: d.0,
            net_stats: d.1,
            host_info: d.2,
            disk_usage: d.3,
            coprocs: d.4,
            results: e.0,
            sticky_files: e.1,
            app_versions: e.2,
            other_results: f.0,
            in_progress_results: f.1,
            client_brand: (a.1 % 2 == 0).then_some(Cow::Borrowed("boinc-rs 0.1.0")),
        })
}

fn message() -> impl Strategy<Value = ServerMessage> {
    let priority = prop_oneof![
        Just(MessagePriority::Low),
        Just(MessagePriority::High),
        Just(MessagePriority::Notice),
        "[a-z]{0,3}x".prop_map(MessagePriority::Other),
    ];
    (priority, text()).prop_map(|(priority, text)| ServerMessage { priority, text })
}

fn file_description() -> impl Strategy<Value = FileDescription> {
    (
        (name(), vec(name(), 0..3), option::of(non_negative()), option::of(non_negative()), text()),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (option::of(1i32..=5), option::of(non_negative()), option::of(hex_block())),
    )
        .prop_map(|(a, b, c)| FileDescription {
            name: a.0,
            urls: a.1,
            nbytes: a.2,
            max_nbytes: a.3,
            md5_cksum: a.4,
            executable: b.0,
            generated_locally: b.1,
            upload_when_present: b.2,
            sticky: b.3,
            no_delete: b.4,
            report_on_rpc: b.5,
            priority: c.0,
            exp_days: c.1,
            file_signature: c.2,
        })
}

fn workunit() -> impl Strategy<Value = WorkunitDescription> {
    (
        (name(), name(), option::of(any::<u32>()), text()),
        (non_negative(), non_negative(), non_negative(), non_negative(), vec(file_ref(), 0..3)),
    )
        .prop_map(|(a, b)| WorkunitDescription {
            name: a.0,
            app_name: a.1,
            version_num: a.2,
            command_line: a.3,
            rsc_fpops_est: b.0,
            rsc_fpops_bound: b.1,
            rsc_memory_bound: b.2,
            rsc_disk_bound: b.3,
            file_refs: b.4,
        })
}

fn result() -> impl Strategy<Value = ResultDescription> {
    (
        name(),
        name(),
        number(),
        text(),
        option::of(any::<u32>()),
        text(),
        any::<bool>(),
        vec(file_ref(), 0..3),
    )
        .prop_map(|r| ResultDescription {
            name: r.0,
            wu_name: r.1,
            report_deadline: r.2,
            platform: r.3,
            version_num: r.4,
            plan_class: r.5,
            report_immediately: r.6,
            file_refs: r.7,
        })
}

fn reply() -> impl Strategy<Value = SchedulerReply> {
    let app = (name(), text(), any::<bool>()).prop_map(|a| AppDescription {
        name: a.0,
        user_friendly_name: a.1,
        non_cpu_intensive: a.2,
    });
    (
        (
            option::of(any::<u32>()),
            any::<bool>(),
            option::of(text()),
            any::<bool>(),
            option::of(non_negative()),
        ),
        (
            vec(message(), 0..3),
            option::of(text()),
            any::<bool>(),
            any::<bool>(),
            option::of(non_negative()),
        ),
        (
            option::of(id()),
            option::of(text()),
            option::of(number()),
            option::of(number()),
            option::of(number()),
        ),
        (
            option::of(text()),
            option::of(text()),
            option::of(raw_preferences()),
            option::of(raw_preferences()),
        ),
        (
            option::of(id()),
            option::of(number()),
            option::of(number()),
            option::of(text()),
            option::of(number()),
        ),
        (
            option::of(id()),
            option::of(text()),
            vec(name(), 0..3),
            vec(name(), 0..2),
            vec(name(), 0..2),
        ),
        (
            vec(app, 0..2),
            vec(file_description(), 0..3),
            vec(app_version(true), 0..2),
            vec(workunit(), 0..3),
            vec(result(), 0..3),
        ),
        (
            option::of(hex_block()),
            option::of(hex_block()),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (vec(text(), 0..2), any::<[bool; 4]>(), option::of(vec(rss_feed(), 0..3))),
    )
        .prop_map(|(a, b, c, d, e, f, g, h, i)| SchedulerReply {
            scheduler_version: a.0,
            dont_use_dcf: a.1,
            master_url: a.2,
            ended: a.3,
            request_delay: a.4,
            messages: b.0,
            project_name: b.1,
            project_is_down: b.2,
            send_full_workload: b.3,
            next_rpc_delay: b.4,
            userid: c.0,
            user_name: c.1,
            user_total_credit: c.2,
            user_expavg_credit: c.3,
            user_create_time: c.4,
            email_hash: d.0,
            cross_project_id: d.1,
            global_preferences: d.2,
            project_preferences: d.3,
            hostid: e.0,
            host_total_credit: e.1,
            host_expavg_credit: e.2,
            host_venue: e.3,
            host_create_time: e.4,
            teamid: f.0,
            team_name: f.1,
            result_acks: f.2,
            result_aborts: f.3,
            result_aborts_if_not_started: f.4,
            apps: g.0,
            file_infos: g.1,
            app_versions: g.2,
            workunits: g.3,
            results: g.4,
            code_sign_key: h.0,
            code_sign_key_signature: h.1,
            message_ack: h.2,
            non_cpu_intensive: h.3,
            verify_files_on_app_start: h.4,
            delete_file_infos: i.0,
            no_rsc_apps: ResourceMap(i.1),
            rss_feeds: i.2,
        })
}

/// A notice feed as a reply names it (its poll interval within the client's bounds).
fn rss_feed() -> impl Strategy<Value = RssFeed> {
    ("https?://[a-z]{1,8}/[a-z_.]{0,12}", 600u32..2_592_000)
        .prop_map(|(url, seconds)| RssFeed { url, poll_interval: f64::from(seconds) })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn requests_read_back_to_what_was_written(request in request()) {
        let xml = request.to_xml();
        let read = SchedulerRequest::from_xml(&xml);
        prop_assert_eq!(read.as_ref(), Ok(&request), "{}", xml);
    }

    #[test]
    fn replies_read_back_to_what_was_written(reply in reply()) {
        let xml = reply.to_xml();
        let read = SchedulerReply::from_xml(&xml);
        prop_assert_eq!(read.as_ref(), Ok(&reply), "{}", xml);
    }
}
