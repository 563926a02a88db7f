//! One requested resource's share of a scheduler reply (seed 000 "Scheduler work-send
//! policy", seed 003's per-resource requests): the server sends jobs for resource R
//! until they cover the request's `req_secs` (instance-seconds) and `req_instances`
//! (instances). Each job must pass, in this order:
//!
//! - the disk check ([`DiskBudget`]): its files fit the request's free-space figures;
//! - seed 000's EDF check against the request's in-progress results ([`super::edf_check`]).
//!
//! A job counts for `duration × usage` instance-seconds, where `duration = fpops_est /
//! flops × DCF / available_frac(R)` is the estimate the client will make, stretched by
//! the fraction of time R computes (the request was sized in wall time by a simulation
//! that runs R only that fraction of the time). When something was refused and nothing
//! sent, the reply says why in BOINC's words ("Tasks won't finish in time", "needs more
//! disk space").

use super::disk_budget::DiskBudget;
use super::edf_check::{EdfEntry, EdfQueue, sane_duration};
use crate::Time;
use crate::estimate::{DCF_MAX, DCF_MIN};
use crate::model::{ResourceType, TimeStats};
use crate::protocol::{SchedulerRequest, ServerMessage};

/// The request's duration correction factor, as a server uses it: clamped to the
/// client's own bounds, 1 when missing or corrupt.
pub fn duration_correction(request: &SchedulerRequest) -> f64 {
    let dcf = request.duration_correction_factor;
    if dcf.is_finite() && dcf > 0.0 { dcf.clamp(DCF_MIN, DCF_MAX) } else { 1.0 }
}

/// A job the server considers sending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JobOffer<'a> {
    /// Its app's name (for the disk message).
    pub app: &'a str,
    /// Seconds from now to its report deadline.
    pub relative_deadline: f64,
    /// Its wall duration on the host ([`ResourceOffer::wall_duration`]).
    pub wall: f64,
    /// Instances of the resource it occupies.
    pub usage: f64,
    /// Bytes of its files on the host.
    pub nbytes: f64,
}

/// Why a job was not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Its files would not fit the disk space the request offers.
    Disk,
    /// It would miss its deadline, or make a queued job miss its own (seed 000).
    Deadline,
}

/// One resource's share of a reply being filled. A server answering many requests may
/// keep one and [`ResourceOffer::restart`] it for each, so that the EDF check's lists are
/// not allocated again every time.
#[derive(Debug, Clone)]
pub struct ResourceOffer {
    resource: ResourceType,
    instances: u32,
    available: f64,
    now: Time,
    wanted_seconds: f64,
    wanted_instances: f64,
    /// Filled from the request at the first job that passes the disk check.
    queue: EdfQueue,
    queue_filled: bool,
    seconds: f64,
    ninstances: f64,
    sent: usize,
    refused_for_deadline: bool,
    /// The last job refused for disk space: its app, the bytes allowed and needed.
    refused_for_disk: Option<(String, f64, f64)>,
}

impl Default for ResourceOffer {
    /// An offer that wants nothing (to be [`ResourceOffer::restart`]ed).
    fn default() -> Self {
        ResourceOffer {
            resource: ResourceType::Cpu,
            instances: 0,
            available: 0.0,
            now: 0.0,
            wanted_seconds: 0.0,
            wanted_instances: 0.0,
            queue: EdfQueue::default(),
            queue_filled: false,
            seconds: 0.0,
            ninstances: 0.0,
            sent: 0,
            refused_for_deadline: false,
            refused_for_disk: None,
        }
    }
}

impl ResourceOffer {
    /// The offer for `resource` at `now`; `None` when the request asks for none of it
    /// or the host may use none of it.
    pub fn new(request: &SchedulerRequest, resource: ResourceType, now: Time) -> Option<Self> {
        let mut offer = ResourceOffer::default();
        offer.restart(request, resource, now).then_some(offer)
    }

    /// Makes this the offer [`ResourceOffer::new`] makes, keeping the EDF check's
    /// buffers; `false` (and an offer that wants nothing) where `new` gives none.
    pub fn restart(
        &mut self,
        request: &SchedulerRequest,
        resource: ResourceType,
        now: Time,
    ) -> bool {
        let instances = request.usable_instances(resource);
        let wanted = request.requests(resource) && instances > 0;
        let stats = &request.time_stats;
        let time_stats = TimeStats {
            on_frac: stats.on_frac,
            active_frac: stats.active_frac,
            gpu_active_frac: stats.gpu_active_frac,
            ..TimeStats::default()
        };
        *self = ResourceOffer {
            resource,
            instances,
            available: time_stats.available_frac(resource),
            now,
            wanted_seconds: if wanted { request.req_secs(resource) } else { 0.0 },
            wanted_instances: if wanted { request.req_instances(resource) } else { 0.0 },
            queue: std::mem::take(&mut self.queue),
            ..ResourceOffer::default()
        };
        wanted
    }

    /// Whether the jobs sent so far leave some of the request unfilled.
    pub fn wants_more(&self) -> bool {
        self.seconds < self.wanted_seconds || self.ninstances < self.wanted_instances
    }

    /// The wall seconds a job of `fpops_est` flops takes on the host, running at `flops`
    /// under the duration correction `dcf`, on a resource that computes part of the
    /// time (corrupt values: "forever", so the job is refused).
    pub fn wall_duration(&self, fpops_est: f64, flops: f64, dcf: f64) -> f64 {
        sane_duration(fpops_est / flops * dcf / self.available)
    }

    /// Considers sending `job` (`disk`: the reply's disk budget, when the request gave
    /// free-space figures; `nothing_sent`: no job of any resource is in the reply yet).
    /// `Ok`: the job is counted as sent, and the caller puts it in the reply.
    pub fn offer(
        &mut self,
        request: &SchedulerRequest,
        job: &JobOffer,
        disk: Option<&mut DiskBudget>,
        nothing_sent: bool,
    ) -> Result<(), Refusal> {
        let mut disk = disk;
        if let Some(disk) = disk.as_deref_mut()
            && !disk.fits(job.nbytes, nothing_sent)
        {
            self.refused_for_disk = Some((job.app.to_owned(), disk.allowed(), job.nbytes));
            return Err(Refusal::Disk);
        }
        let (resource, instances, available, now) =
            (self.resource, self.instances, self.available, self.now);
        if !self.queue_filled {
            self.queue.refill(request, resource, instances, available, now);
            self.queue_filled = true;
        }
        if !self.queue.try_insert(EdfEntry::new(job.relative_deadline, job.wall, job.usage)) {
            self.refused_for_deadline = true;
            return Err(Refusal::Deadline);
        }
        if let Some(disk) = disk {
            disk.take(job.nbytes);
        }
        self.seconds += job.wall * job.usage;
        self.ninstances += job.usage;
        self.sent += 1;
        Ok(())
    }

    /// Jobs sent for this resource.
    pub fn sent(&self) -> usize {
        self.sent
    }

    /// Why nothing was sent for this resource, in BOINC's words (none when something
    /// was sent or nothing was refused).
    pub fn no_work_messages(&self, request: &SchedulerRequest) -> Vec<ServerMessage> {
        let mut messages = Vec::new();
        if self.sent > 0 {
            return messages;
        }
        if self.refused_for_deadline {
            let stats = &request.time_stats;
            messages
                .push(ServerMessage::tasks_wont_finish_in_time(stats.on_frac, stats.active_frac));
        }
        if let Some((app, allowed, needed)) = &self.refused_for_disk {
            messages.push(ServerMessage::needs_more_disk_space(app, *allowed, *needed));
        }
        messages
    }
}
