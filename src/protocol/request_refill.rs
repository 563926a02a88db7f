//! Refilling an owned scheduler request in place from one borrowed from the state: a
//! client whose sessions outlive the borrow (the actor runtime hands each to a project's
//! actor) keeps one owned request and rewrites it session after session, its text and
//! lists reusing the room the previous session's took, instead of copying every name
//! into new allocations and freeing them again ([`SchedulerRequest::into_owned`]).
//! `refill` leaves the target equal to `into_owned` of the source; what the source owns
//! outright (the preferences, the sticky files) is swapped over rather than copied.

use super::app_description::{AppVersionDescription, CoprocessorUsage};
use super::host_report::{GpuReport, HostInfo};
use super::queue_report::{InProgressResult, OtherResult};
use super::reported_result::{OutputFile, ReportedResult};
use super::scheduler_request::SchedulerRequest;
use std::borrow::Cow;

/// `target` made to hold `from`'s text, in its own room when it has some.
fn refill_text(target: &mut Cow<'static, str>, from: &str) {
    match target {
        Cow::Owned(text) => {
            text.clear();
            text.push_str(from);
        }
        Cow::Borrowed(_) => *target = Cow::Owned(from.to_owned()),
    }
}

fn refill_optional_text(target: &mut Option<Cow<'static, str>>, from: Option<&Cow<'_, str>>) {
    match (target.as_mut(), from) {
        (Some(target), Some(from)) => refill_text(target, from),
        (_, from) => *target = from.map(|text| Cow::Owned(text.to_string())),
    }
}

/// `target` made equal to `from`, copied only when it differs (values that rarely
/// change from one session to the next: the host's description, platform lists).
fn refill_value<T: ToOwned + PartialEq + ?Sized>(target: &mut Cow<'static, T>, from: &T) {
    if target.as_ref() != from {
        *target = Cow::Owned(from.to_owned());
    }
}

/// `target` made the list `from`, its elements refilled in place as far as both go.
fn refill_list<T, U>(
    target: &mut Vec<T>,
    from: &[U],
    refill: impl Fn(&mut T, &U),
    own: impl Fn(&U) -> T,
) {
    target.truncate(from.len());
    for (slot, item) in target.iter_mut().zip(from) {
        refill(slot, item);
    }
    let kept = target.len();
    target.extend(from[kept..].iter().map(own));
}

impl SchedulerRequest<'static> {
    /// Makes this request equal to what `from` was (as [`SchedulerRequest::into_owned`]
    /// would), reusing the room its text and lists already have; `from` is left with
    /// this request's old preferences and sticky files.
    pub fn refill(&mut self, from: &mut SchedulerRequest<'_>) {
        let SchedulerRequest {
            authenticator,
            hostid,
            rpc_seqno,
            client_version,
            resource_share_fraction,
            rrs_fraction,
            prrs_fraction,
            duration_correction_factor,
            allow_multiple_clients,
            sandbox,
            dont_send_work,
            work_req_seconds,
            cpu_req_secs,
            cpu_req_instances,
            estimated_delay,
            client_cap_plan_class,
            platform_name,
            alt_platforms,
            code_sign_key,
            working_global_preferences,
            cross_project_id,
            time_stats,
            net_stats,
            host_info,
            disk_usage,
            coprocs,
            results,
            sticky_files,
            app_versions,
            other_results,
            in_progress_results,
            client_brand,
        } = from;
        refill_text(&mut self.authenticator, authenticator);
        self.hostid = *hostid;
        self.rpc_seqno = *rpc_seqno;
        self.client_version = *client_version;
        self.resource_share_fraction = *resource_share_fraction;
        self.rrs_fraction = *rrs_fraction;
        self.prrs_fraction = *prrs_fraction;
        self.duration_correction_factor = *duration_correction_factor;
        self.allow_multiple_clients = *allow_multiple_clients;
        self.sandbox = *sandbox;
        self.dont_send_work = *dont_send_work;
        self.work_req_seconds = *work_req_seconds;
        self.cpu_req_secs = *cpu_req_secs;
        self.cpu_req_instances = *cpu_req_instances;
        self.estimated_delay = *estimated_delay;
        self.client_cap_plan_class = *client_cap_plan_class;
        refill_text(&mut self.platform_name, platform_name);
        refill_value(&mut self.alt_platforms, alt_platforms.as_ref());
        refill_optional_text(&mut self.code_sign_key, code_sign_key.as_ref());
        std::mem::swap(&mut self.working_global_preferences, working_global_preferences);
        refill_optional_text(&mut self.cross_project_id, cross_project_id.as_ref());
        self.time_stats = time_stats.clone();
        self.net_stats = *net_stats;
        self.host_info.refill(host_info);
        self.disk_usage = disk_usage.clone();
        refill_list(&mut self.coprocs, coprocs, GpuReport::refill, |g| g.clone().into_owned());
        refill_list(&mut self.results, results, ReportedResult::refill, |r| r.clone().into_owned());
        std::mem::swap(&mut self.sticky_files, sticky_files);
        refill_list(&mut self.app_versions, app_versions, AppVersionDescription::refill, |v| {
            v.clone().into_owned()
        });
        refill_list(&mut self.other_results, other_results, OtherResult::refill, |o| {
            o.clone().into_owned()
        });
        match (self.in_progress_results.as_mut(), in_progress_results) {
            (Some(target), Some(from)) => {
                refill_list(target, from, InProgressResult::refill, |r| r.clone().into_owned())
            }
            (_, from) => {
                self.in_progress_results =
                    from.as_ref().map(|list| list.iter().map(|r| r.clone().into_owned()).collect());
            }
        }
        refill_optional_text(&mut self.client_brand, client_brand.as_ref());
    }
}

impl HostInfo<'static> {
    fn refill(&mut self, from: &HostInfo<'_>) {
        let HostInfo {
            description,
            p_ncpus,
            p_fpops,
            m_nbytes,
            m_swap,
            d_total,
            d_free,
            n_usable_coprocs,
        } = from;
        refill_value(&mut self.description, description.as_ref());
        self.p_ncpus = *p_ncpus;
        self.p_fpops = *p_fpops;
        self.m_nbytes = *m_nbytes;
        self.m_swap = *m_swap;
        self.d_total = *d_total;
        self.d_free = *d_free;
        self.n_usable_coprocs = *n_usable_coprocs;
    }
}

impl GpuReport<'static> {
    fn refill(&mut self, from: &GpuReport<'_>) {
        let GpuReport {
            resource,
            count,
            name,
            available_ram,
            peak_flops,
            req_secs,
            req_instances,
            estimated_delay,
            cuda_version,
            driver_version,
            compute_capability,
            cuda_properties,
            opencl,
        } = from;
        self.resource = *resource;
        self.count = *count;
        refill_text(&mut self.name, name);
        self.available_ram = *available_ram;
        self.peak_flops = *peak_flops;
        self.req_secs = *req_secs;
        self.req_instances = *req_instances;
        self.estimated_delay = *estimated_delay;
        self.cuda_version = *cuda_version;
        self.driver_version = *driver_version;
        self.compute_capability = *compute_capability;
        if self.cuda_properties != *cuda_properties {
            self.cuda_properties.clone_from(cuda_properties);
        }
        if self.opencl != *opencl {
            self.opencl.clone_from(opencl);
        }
    }
}

impl ReportedResult<'static> {
    fn refill(&mut self, from: &ReportedResult<'_>) {
        let ReportedResult {
            name,
            final_cpu_time,
            final_elapsed_time,
            exit_status,
            state,
            platform,
            version_num,
            plan_class,
            final_peak_working_set_size,
            final_peak_swap_size,
            final_peak_disk_usage,
            app_version_num,
            stderr_out,
            output_files,
        } = from;
        refill_text(&mut self.name, name);
        self.final_cpu_time = *final_cpu_time;
        self.final_elapsed_time = *final_elapsed_time;
        self.exit_status = *exit_status;
        self.state = *state;
        refill_text(&mut self.platform, platform);
        self.version_num = *version_num;
        refill_text(&mut self.plan_class, plan_class);
        self.final_peak_working_set_size = *final_peak_working_set_size;
        self.final_peak_swap_size = *final_peak_swap_size;
        self.final_peak_disk_usage = *final_peak_disk_usage;
        self.app_version_num = *app_version_num;
        refill_text(&mut self.stderr_out, stderr_out);
        refill_list(&mut self.output_files, output_files, OutputFile::refill, |f| {
            f.clone().into_owned()
        });
    }
}

impl OutputFile<'static> {
    fn refill(&mut self, from: &OutputFile<'_>) {
        let OutputFile { name, nbytes, max_nbytes, md5_cksum, upload_urls } = from;
        refill_text(&mut self.name, name);
        self.nbytes = *nbytes;
        self.max_nbytes = *max_nbytes;
        refill_text(&mut self.md5_cksum, md5_cksum);
        refill_value(&mut self.upload_urls, upload_urls.as_ref());
    }
}

impl AppVersionDescription<'static> {
    fn refill(&mut self, from: &AppVersionDescription<'_>) {
        let AppVersionDescription {
            app_name,
            version_num,
            platform,
            plan_class,
            api_version,
            avg_ncpus,
            max_ncpus,
            flops,
            cmdline,
            coprocessor,
            file_refs,
            duration_correction_factor,
        } = from;
        refill_text(&mut self.app_name, app_name);
        self.version_num = *version_num;
        refill_text(&mut self.platform, platform);
        refill_text(&mut self.plan_class, plan_class);
        refill_text(&mut self.api_version, api_version);
        self.avg_ncpus = *avg_ncpus;
        self.max_ncpus = *max_ncpus;
        self.flops = *flops;
        refill_text(&mut self.cmdline, cmdline);
        match (self.coprocessor.as_mut(), coprocessor) {
            (Some(target), Some(CoprocessorUsage { kind, count })) => {
                refill_text(&mut target.kind, kind);
                target.count = *count;
            }
            (_, from) => {
                self.coprocessor = from.as_ref().map(|usage| CoprocessorUsage {
                    kind: Cow::Owned(usage.kind.to_string()),
                    count: usage.count,
                });
            }
        }
        if self.file_refs != *file_refs {
            self.file_refs.clone_from(file_refs);
        }
        self.duration_correction_factor = *duration_correction_factor;
    }
}

impl OtherResult<'static> {
    fn refill(&mut self, from: &OtherResult<'_>) {
        let OtherResult { name, app_version, plan_class } = from;
        refill_text(&mut self.name, name);
        self.app_version = *app_version;
        refill_text(&mut self.plan_class, plan_class);
    }
}

impl InProgressResult<'static> {
    fn refill(&mut self, from: &InProgressResult<'_>) {
        let InProgressResult { name, report_deadline, time_remaining, avg_ncpus, gpu } = from;
        refill_text(&mut self.name, name);
        self.report_deadline = *report_deadline;
        self.time_remaining = *time_remaining;
        self.avg_ncpus = *avg_ncpus;
        self.gpu = *gpu;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn other(name: &str, plan_class: &str) -> OtherResult<'static> {
        OtherResult {
            name: Cow::Owned(name.into()),
            app_version: 1,
            plan_class: plan_class.to_owned().into(),
        }
    }

    fn reported(name: &str, files: usize) -> ReportedResult<'static> {
        ReportedResult {
            name: Cow::Owned(name.into()),
            stderr_out: Cow::Owned(format!("<stderr of {name}>")),
            output_files: (0..files)
                .map(|i| OutputFile {
                    name: Cow::Owned(format!("{name}_{i}")),
                    nbytes: i as f64,
                    upload_urls: Cow::Owned(vec![format!("http://127.0.0.1/upload/{i}")]),
                    ..OutputFile::default()
                })
                .collect(),
            ..ReportedResult::default()
        }
    }

    /// A request as a session might send it, its lists `sizes` long.
    fn request(seed: u32, sizes: (usize, usize, usize)) -> SchedulerRequest<'static> {
        SchedulerRequest {
            authenticator: Cow::Owned(format!("key{seed}")),
            rpc_seqno: u64::from(seed),
            platform_name: Cow::Borrowed("x86_64-pc-linux-gnu"),
            alt_platforms: Cow::Owned(vec!["i686-pc-linux-gnu".into(); seed as usize % 2]),
            code_sign_key: (seed % 3 == 0).then(|| Cow::Owned(format!("sign{seed}"))),
            cross_project_id: Some(Cow::Borrowed("")),
            working_global_preferences: (seed % 2 == 0).then(crate::model::Prefs::default),
            sticky_files: (0..seed as usize % 3)
                .map(|i| super::super::queue_report::StickyFile {
                    name: format!("sticky{i}"),
                    nbytes: 1.0,
                    status: 1,
                })
                .collect(),
            results: (0..sizes.0).map(|i| reported(&format!("r{seed}_{i}"), i % 3)).collect(),
            other_results: (0..sizes.1).map(|i| other(&format!("o{seed}_{i}"), "mt")).collect(),
            in_progress_results: (sizes.2 > 0).then(|| {
                (0..sizes.2)
                    .map(|i| InProgressResult {
                        name: Cow::Owned(format!("p{seed}_{i}")),
                        avg_ncpus: 1.0,
                        ..InProgressResult::default()
                    })
                    .collect()
            }),
            ..SchedulerRequest::default()
        }
    }

    fn borrowed<'a>(request: &'a SchedulerRequest<'static>) -> SchedulerRequest<'a> {
        // Every text borrowed, as a request built from the state is.
        fn borrow(text: &str) -> Cow<'_, str> {
            Cow::Borrowed(text)
        }
        SchedulerRequest {
            authenticator: borrow(&request.authenticator),
            platform_name: borrow(&request.platform_name),
            other_results: request
                .other_results
                .iter()
                .map(|o| OtherResult {
                    name: borrow(&o.name),
                    app_version: o.app_version,
                    plan_class: borrow(&o.plan_class),
                })
                .collect(),
            ..request.clone()
        }
    }

    proptest! {
        /// Refilled session after session, with lists growing and shrinking, the kept
        /// request is each time what copying the new one would have made.
        #[test]
        fn a_refilled_request_equals_the_request_it_was_refilled_from(
            sessions in proptest::collection::vec((0u32..50, (0usize..6, 0usize..6, 0usize..4)), 1..8)
        ) {
            let mut kept = SchedulerRequest::default();
            for (seed, sizes) in sessions {
                let new = request(seed, sizes);
                kept.refill(&mut borrowed(&new));
                prop_assert_eq!(&kept, &borrowed(&new).into_owned());
                prop_assert_eq!(&kept, &new);
            }
        }
    }
}
