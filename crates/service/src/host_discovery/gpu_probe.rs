//! GPU discovery in a process of its own (issue "What a real project server sees",
//! GPUs): the vendors' libraries (NVML, libcuda, the OpenCL ICD loader and every
//! driver it opens) are loaded by a short-lived child, `boinc-rs detect-gpus`, which
//! prints what it found and exits, as BOINC's client runs itself with `--detect_gpus`.
//! A driver that crashes or hangs takes down the child, not the client (the client
//! then computes on its CPUs and says why), and the libraries' tens of megabytes do
//! not stay mapped in a service that runs for months. The child's answer is read
//! bounded in size and time, and checked like any other outside input.
//!
//! Where no detector program is given (the client embedded as a library, and unit
//! tests) discovery runs in the calling process instead.

use super::nvidia::{NvidiaDiscoveryError, NvidiaGpus, discover_nvidia_gpus};
use super::opencl::{OpenclDiscoveryError, OpenclPlatform, discover_opencl};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The most bytes of a detector's answer read (a machine with 64 GPUs of four vendors
/// answers in well under this).
const MAX_ANSWER_BYTES: u64 = 4 << 20;
/// How long a detector may take by default: drivers initialise their compilers, a few
/// seconds; a hung driver is given up on after this.
pub const DEFAULT_DETECTION_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a running detector is looked at.
const POLL: Duration = Duration::from_millis(20);

/// What GPU discovery found: each vendor library's devices, or why none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GpuFindings {
    /// NVML's (and libcuda's) NVIDIA GPUs.
    pub nvidia: Result<NvidiaGpus, NvidiaDiscoveryError>,
    /// Every OpenCL platform and device.
    pub opencl: Result<Vec<OpenclPlatform>, OpenclDiscoveryError>,
}

impl GpuFindings {
    /// No GPU, for `reason` (both vendors' answers say it).
    fn none(reason: &str) -> GpuFindings {
        GpuFindings {
            nvidia: Err(NvidiaDiscoveryError::Detector(reason.to_string())),
            opencl: Err(OpenclDiscoveryError::Detector(reason.to_string())),
        }
    }
}

/// Looks for GPUs in this process.
pub fn find_gpus_here() -> GpuFindings {
    GpuFindings { nvidia: discover_nvidia_gpus(), opencl: discover_opencl() }
}

/// The program that looks for GPUs on the client's behalf: run with `args`, it prints
/// [`GpuFindings`] as JSON on its standard output ([`write_gpu_findings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuDetector {
    /// The program (the `boinc-rs` binary itself).
    pub program: PathBuf,
    /// Its arguments (`detect-gpus`).
    pub args: Vec<String>,
    /// How long it may take.
    pub timeout: Duration,
}

/// Why the detector gave no answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GpuProbeError {
    /// It could not be started.
    #[error(
        "the GPU detector {program} could not be started ({reason}); check that the binary is still installed"
    )]
    Start {
        /// The program.
        program: String,
        /// The system's error.
        reason: String,
    },
    /// It ran past its time and was killed: a driver hung.
    #[error(
        "the GPU detector ran past {0:?} and was stopped: a GPU driver hangs; update or reinstall the driver"
    )]
    TimedOut(Duration),
    /// It ended badly (a driver crashed it).
    #[error(
        "the GPU detector ended with {0}: a GPU driver crashed it; update or reinstall the driver"
    )]
    Failed(String),
    /// Its answer was not GPU findings.
    #[error(
        "the GPU detector's answer could not be read ({0}); the binary may be of another version: reinstall boinc-rs"
    )]
    Answer(String),
}

impl GpuDetector {
    /// Runs the detector and reads its answer.
    pub fn run(&self) -> Result<GpuFindings, GpuProbeError> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| GpuProbeError::Start {
                program: self.program.display().to_string(),
                reason: e.to_string(),
            })?;
        // The answer is read while the child runs, so that a long one never fills the
        // pipe and stalls it; the read ends when the child's end of the pipe closes.
        let reader = child.stdout.take().map(|stdout| {
            std::thread::spawn(move || {
                let mut answer = Vec::new();
                let read = stdout.take(MAX_ANSWER_BYTES + 1).read_to_end(&mut answer);
                read.map(|_| answer)
            })
        });
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(POLL),
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(GpuProbeError::TimedOut(self.timeout));
                }
                Err(error) => return Err(GpuProbeError::Failed(error.to_string())),
            }
        };
        if !status.success() {
            return Err(GpuProbeError::Failed(status.to_string()));
        }
        let answer = reader
            .ok_or_else(|| GpuProbeError::Answer("no output".into()))?
            .join()
            .map_err(|_| GpuProbeError::Answer("the reader stopped".into()))?
            .map_err(|e| GpuProbeError::Answer(e.to_string()))?;
        read_gpu_findings(&answer)
    }
}

/// Reads a detector's answer (bounded: a longer one is refused).
pub fn read_gpu_findings(answer: &[u8]) -> Result<GpuFindings, GpuProbeError> {
    if answer.len() as u64 > MAX_ANSWER_BYTES {
        return Err(GpuProbeError::Answer(format!("more than {MAX_ANSWER_BYTES} bytes")));
    }
    serde_json::from_slice(answer).map_err(|e| GpuProbeError::Answer(e.to_string()))
}

/// What the detector prints: the findings of this process, as JSON.
pub fn write_gpu_findings(out: &mut impl std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, &find_gpus_here()).map_err(std::io::Error::other)?;
    out.write_all(b"\n")
}

/// Looks for GPUs with `detector` when there is one, else here; a detector that fails
/// leaves the client on its CPUs, with the reason in both vendors' answers.
pub fn find_gpus(detector: Option<&GpuDetector>) -> GpuFindings {
    let Some(detector) = detector else { return find_gpus_here() };
    match detector.run() {
        Ok(findings) => findings,
        Err(error) => {
            tracing::warn!(%error, "no GPU used");
            GpuFindings::none(&error.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(script: &str, timeout: Duration) -> GpuDetector {
        GpuDetector { program: "/bin/sh".into(), args: vec!["-c".into(), script.into()], timeout }
    }

    #[test]
    fn an_answer_round_trips() {
        let found = find_gpus_here();
        let mut text = Vec::new();
        write_gpu_findings(&mut text).expect("written");
        assert_eq!(read_gpu_findings(&text).expect("read back"), found);
    }

    #[test]
    fn a_hanging_detector_is_stopped_at_its_deadline() {
        let started = Instant::now();
        let error = shell("sleep 30", Duration::from_millis(300)).run().expect_err("hangs");
        assert!(matches!(error, GpuProbeError::TimedOut(_)), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    }

    #[test]
    fn a_crashing_detector_leaves_the_cpus() {
        let error = shell("kill -SEGV $$", Duration::from_secs(20)).run().expect_err("crashes");
        assert!(matches!(error, GpuProbeError::Failed(_)), "{error}");
        let found = find_gpus(Some(&shell("exit 3", Duration::from_secs(20))));
        let reason = found.nvidia.expect_err("no NVIDIA GPU").to_string();
        assert!(reason.contains("exit status: 3"), "{reason}");
        assert!(found.opencl.is_err());
    }

    #[test]
    fn hostile_answers_are_refused() {
        let garbage = shell("echo '{\"nvidia\": 5}'", Duration::from_secs(20));
        assert!(matches!(garbage.run(), Err(GpuProbeError::Answer(_))));
        // An endless answer is cut at the bound, and the child does not stall on it.
        let endless = shell("yes", Duration::from_secs(20)).run().expect_err("endless");
        assert!(
            matches!(endless, GpuProbeError::Answer(_) | GpuProbeError::Failed(_)),
            "{endless}"
        );
        let missing = GpuDetector {
            program: "/nonexistent/boinc-rs".into(),
            args: vec![],
            timeout: Duration::from_secs(1),
        };
        assert!(matches!(missing.run(), Err(GpuProbeError::Start { .. })));
    }
}
