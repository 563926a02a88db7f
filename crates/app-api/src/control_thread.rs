//! The app's API thread (docs/design.md "Protocol facts", App API): ten times a second it
//! reads the client's heartbeat and process-control requests; once a second it reports
//! the app's CPU times and fraction done (not while suspended, as BOINC's API); every ten
//! seconds it checks that the client's process still exists (without a client process
//! id: that a heartbeat came within 30 s), and asks the app to quit if not. The app's
//! computing thread sees the requests through [`SharedState`].

use super::mapping::SharedMapping;
use boinc_core::protocol::app_api::{
    AppStatusMessage, Channel, Heartbeat, ProcessControl, encode_message, message_text,
};
use nix::sys::signal::kill;
use nix::unistd::Pid;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How often the thread looks at the channels.
const TICK: Duration = Duration::from_millis(100);
/// How often the app reports its status.
const STATUS_EVERY: u32 = 10;
/// How often the client's process is looked for, in ticks.
const CLIENT_CHECK_EVERY: u32 = 100;
/// Without a client process id, how long without a heartbeat means the client is gone.
const HEARTBEAT_GIVE_UP: Duration = Duration::from_secs(30);

/// What the computing thread and the API thread share.
#[derive(Debug, Default)]
pub(crate) struct SharedState {
    /// The client asked the app to suspend.
    suspended: Mutex<bool>,
    /// Signalled when the app may go on (resume, quit, abort).
    wake: Condvar,
    /// The client asked the app to quit (or is gone).
    pub(crate) quit: AtomicBool,
    /// The client asked the app to abort.
    pub(crate) abort: AtomicBool,
    /// The fraction done, as f64 bits (NaN: not said yet).
    fraction_done: AtomicU64,
    /// CPU seconds of the job at its last checkpoint, as f64 bits.
    checkpoint_cpu_time: AtomicU64,
    /// The thread is to stop (the app is finishing).
    stop: AtomicBool,
}

impl SharedState {
    /// A state with no fraction done said yet and a checkpoint at `checkpoint_cpu_time`.
    pub(crate) fn new(checkpoint_cpu_time: f64) -> Self {
        let state = SharedState::default();
        state.fraction_done.store(f64::NAN.to_bits(), Ordering::Relaxed);
        state.checkpoint_cpu_time.store(checkpoint_cpu_time.to_bits(), Ordering::Relaxed);
        state
    }

    pub(crate) fn set_fraction_done(&self, fraction: f64) {
        self.fraction_done.store(fraction.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
    }

    fn fraction_done(&self) -> Option<f64> {
        let value = f64::from_bits(self.fraction_done.load(Ordering::Relaxed));
        (!value.is_nan()).then_some(value)
    }

    pub(crate) fn set_checkpoint_cpu_time(&self, seconds: f64) {
        self.checkpoint_cpu_time.store(seconds.to_bits(), Ordering::Relaxed);
    }

    fn checkpoint_cpu_time(&self) -> f64 {
        f64::from_bits(self.checkpoint_cpu_time.load(Ordering::Relaxed))
    }

    pub(crate) fn is_suspended(&self) -> bool {
        *self.suspended.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn set_suspended(&self, suspended: bool) {
        *self.suspended.lock().unwrap_or_else(PoisonError::into_inner) = suspended;
        self.wake.notify_all();
    }

    fn ask(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::SeqCst);
        // Wake a suspended computing thread so that it sees the request.
        let _guard = self.suspended.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.notify_all();
    }

    /// Blocks while the app is suspended (and not asked to quit or abort).
    pub(crate) fn wait_while_suspended(&self) {
        let mut suspended = self.suspended.lock().unwrap_or_else(PoisonError::into_inner);
        while *suspended && !self.quit.load(Ordering::SeqCst) && !self.abort.load(Ordering::SeqCst)
        {
            suspended = self.wake.wait(suspended).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Tells the thread to stop.
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// What the thread needs to run.
pub(crate) struct ControlThread {
    pub(crate) mapping: Arc<SharedMapping>,
    pub(crate) state: Arc<SharedState>,
    /// The job's CPU seconds before this run.
    pub(crate) wu_cpu_time: f64,
    /// The client's process id (0: unknown).
    pub(crate) client_pid: u32,
}

/// CPU seconds this process has used.
pub(crate) fn process_cpu_seconds() -> f64 {
    nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF).map_or(0.0, |u| {
        let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        seconds(u.user_time()) + seconds(u.system_time())
    })
}

impl ControlThread {
    /// The thread's loop; returns when told to stop.
    pub(crate) fn run(self) {
        let mut last_heartbeat = Instant::now();
        let mut tick: u32 = 0;
        while !self.state.stop.load(Ordering::SeqCst) {
            std::thread::sleep(TICK);
            tick = tick.wrapping_add(1);
            if self.read_heartbeat() {
                last_heartbeat = Instant::now();
            }
            self.read_requests();
            if tick % STATUS_EVERY == 0 && !self.state.is_suspended() {
                self.report_status();
            }
            if tick % CLIENT_CHECK_EVERY == 0 && self.client_gone(last_heartbeat) {
                // As BOINC's API: without a client, stop (exit 0, to be restarted).
                self.state.ask(&self.state.quit);
            }
        }
    }

    /// Takes a message from a client-written channel.
    fn take(&self, channel: Channel) -> Option<String> {
        let bytes = self.mapping.read(channel);
        let text = match message_text(&bytes) {
            Ok(None) => return None,
            Ok(Some(text)) => Some(text.to_owned()),
            Err(_) => None,
        };
        self.mapping.clear(channel);
        text
    }

    fn read_heartbeat(&self) -> bool {
        self.take(Channel::Heartbeat).is_some_and(|text| Heartbeat::parse(&text).is_ok())
    }

    fn read_requests(&self) {
        let Some(text) = self.take(Channel::ProcessControlRequest) else { return };
        for request in ProcessControl::parse(&text).unwrap_or_default() {
            match request {
                ProcessControl::Suspend => self.state.set_suspended(true),
                ProcessControl::Resume => self.state.set_suspended(false),
                ProcessControl::Quit => self.state.ask(&self.state.quit),
                ProcessControl::Abort => self.state.ask(&self.state.abort),
                ProcessControl::RereadAppInfo | ProcessControl::NetworkAvailable => {}
            }
        }
    }

    /// Sends the app's status if the client read the last one.
    pub(crate) fn report_status(&self) {
        send_status(&self.mapping, &self.state, self.wu_cpu_time);
    }

    fn client_gone(&self, last_heartbeat: Instant) -> bool {
        match i32::try_from(self.client_pid) {
            Ok(pid) if pid > 0 => kill(Pid::from_raw(pid), None) == Err(nix::errno::Errno::ESRCH),
            _ => last_heartbeat.elapsed() > HEARTBEAT_GIVE_UP,
        }
    }
}

/// Puts the app's status into its channel if the client has read the previous one.
/// Returns whether it was put.
pub(crate) fn send_status(mapping: &SharedMapping, state: &SharedState, wu_cpu_time: f64) -> bool {
    if mapping.read(Channel::AppStatus)[0] != 0 {
        return false;
    }
    let status = AppStatusMessage {
        current_cpu_time: wu_cpu_time + process_cpu_seconds(),
        checkpoint_cpu_time: state.checkpoint_cpu_time(),
        fraction_done: state.fraction_done(),
        ..AppStatusMessage::default()
    };
    match encode_message(&status.to_message()) {
        Ok(bytes) => {
            mapping.write(Channel::AppStatus, &bytes);
            true
        }
        Err(_) => false,
    }
}
