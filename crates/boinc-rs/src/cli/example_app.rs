//! `boinc-rs example-app`: a science app shipped with boinc-rs (issue "Running real
//! apps"), built on [`boinc_app_api`]. It does real floating-point work for a
//! number of CPU seconds or flops, checkpoints to a file in its slot, reports its
//! progress, and honours suspend, resume, quit and abort through BOINC's shared-memory
//! API (or, with `--no-api`, runs as a plain program that the client drives with
//! signals). Its output is its input upper-cased, then a line with the result.
//!
//! For testing the client it can also misbehave on request: crash, hang, exit early or
//! with an error, leave a child process behind, flood its standard error, damage its
//! shared memory, write outside its slot, write a big file, allocate a lot of memory,
//! or ask to be restarted later.

use anyhow::{Context, Result};
use boinc_app_api::{AppControl, BoincApp};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The app's checkpoint, in its slot.
const CHECKPOINT_FILE: &str = "example_app_checkpoint.txt";
/// The mark `--hang-once` leaves in the slot before it hangs.
const HUNG_MARK_FILE: &str = "example_app_hung_once";
/// Where `--fork-child` writes its child's process id, in the slot.
pub(crate) const CHILD_PID_FILE: &str = "example_app_child_pid";
/// Iterations per slice of work between polls of the client.
const SLICE: u64 = 200_000;
/// Floating-point operations per iteration of the kernel.
const FLOPS_PER_ITERATION: f64 = 4.0;

/// How the app damages its shared memory (`--damage-shared-memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Damage {
    /// Every byte of every channel overwritten (flags set, no terminating NUL).
    Garbage,
    /// The file truncated to nothing.
    Truncate,
}

/// The example app's command line.
#[derive(Debug, clap::Args)]
pub(crate) struct ExampleAppArgs {
    /// CPU seconds of work, over every run of the job (default: 10).
    #[arg(long, value_name = "S", conflicts_with = "flops")]
    seconds: Option<f64>,
    /// Floating-point operations of work instead.
    #[arg(long, value_name = "F")]
    flops: Option<f64>,
    /// The open name of an input file (upper-cased into the output).
    #[arg(long, value_name = "OPEN_NAME")]
    input: Option<String>,
    /// The open name of the output file.
    #[arg(long, value_name = "OPEN_NAME", default_value = "out")]
    output: String,
    /// Checkpoint this often, seconds (default: as the client says in init_data.xml).
    #[arg(long, value_name = "S")]
    checkpoint_period: Option<f64>,
    /// Run without BOINC's API, as a plain program (the client's wrapper mode).
    #[arg(long)]
    no_api: bool,
    /// Crash (SIGSEGV) after this many CPU seconds of a run.
    #[arg(long, value_name = "S")]
    crash_after: Option<f64>,
    /// Hang at start: never read the client's messages, never compute.
    #[arg(long)]
    hang: bool,
    /// Hang at start once: a run that finds no mark in its slot leaves one and hangs;
    /// later runs of the job compute.
    #[arg(long, conflicts_with = "hang")]
    hang_once: bool,
    /// Exit with status 0 without finishing after this many CPU seconds of a run.
    #[arg(long, value_name = "S")]
    exit_early_after: Option<f64>,
    /// Exit with this status at start.
    #[arg(long, value_name = "N")]
    exit_code: Option<i32>,
    /// Start a child process that outlives the app (its id goes to a file in the slot).
    #[arg(long)]
    fork_child: bool,
    /// Write to standard error as fast as 100 MB/s while computing.
    #[arg(long)]
    flood_stderr: bool,
    /// Damage the shared memory at start.
    #[arg(long, value_enum, value_name = "HOW")]
    damage_shared_memory: Option<Damage>,
    /// Try to write this file (outside the slot); exit with status 1 if refused.
    #[arg(long, value_name = "PATH")]
    write_outside: Option<PathBuf>,
    /// Write this many bytes to the output file at start (the file-size limit's test);
    /// exit with status 1 if a write fails.
    #[arg(long, value_name = "BYTES")]
    write_bytes: Option<u64>,
    /// Allocate and touch this many bytes at start (the address-space limit's test); an
    /// allocation that fails ends the app as Rust's allocation failures do.
    #[arg(long, value_name = "BYTES")]
    allocate: Option<usize>,
    /// On a first run, ask the client to restart the app after this many seconds.
    #[arg(long, value_name = "S")]
    temporary_exit: Option<f64>,
}

/// Where the work stands (what the checkpoint holds).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct Progress {
    iterations: u64,
    value: f64,
    /// CPU seconds of the runs before this one, up to the checkpoint.
    cpu_seconds: f64,
}

impl Progress {
    fn read(path: &Path) -> Option<Progress> {
        let text = std::fs::read_to_string(path).ok()?;
        let mut fields = text.split_whitespace();
        Some(Progress {
            iterations: fields.next()?.parse().ok()?,
            value: fields.next()?.parse().ok()?,
            cpu_seconds: fields.next()?.parse().ok()?,
        })
    }

    /// Writes the checkpoint atomically (a crash mid-write leaves the previous one).
    fn write(&self, path: &Path) -> std::io::Result<()> {
        let temporary = path.with_extension("tmp");
        std::fs::write(
            &temporary,
            format!("{} {:e} {}\n", self.iterations, self.value, self.cpu_seconds),
        )?;
        std::fs::rename(temporary, path)
    }
}

/// A slice of the kernel: `iterations` steps of a contracting map, so the value stays
/// bounded and the work cannot be optimised away.
fn compute(mut value: f64, iterations: u64) -> f64 {
    for _ in 0..iterations {
        value = std::hint::black_box(value * 0.999_999 + 1.0e-3).sqrt();
    }
    value
}

/// Dies of SIGSEGV, as a crashing app does.
fn crash() -> ! {
    use nix::sys::signal::{SigHandler, Signal, raise, signal};
    // No core file: the slot is not the place for one.
    let _ = nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0);
    // SAFETY: restores the default action (the runtime handles SIGSEGV to report stack
    // overflows); no handler of ours is involved.
    let _ = unsafe { signal(Signal::SIGSEGV, SigHandler::SigDfl) };
    let _ = raise(Signal::SIGSEGV);
    std::process::abort()
}

/// Writes `bytes` bytes to `path`, a megabyte at a time.
fn write_bytes(path: &Path, bytes: u64) -> std::io::Result<()> {
    let block = vec![b'B'; 1 << 20];
    let mut file = std::fs::File::create(path)?;
    let mut left = bytes;
    while left > 0 {
        let now = left.min(block.len() as u64) as usize;
        file.write_all(&block[..now])?;
        left -= now as u64;
    }
    file.sync_all()
}

fn flood_stderr() {
    std::thread::spawn(|| {
        let block = vec![b'E'; 1 << 20];
        let mut stderr = std::io::stderr();
        loop {
            if stderr.write_all(&block).is_err() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
}

/// Runs the example app in the current directory (its slot).
pub(crate) fn example_app(args: ExampleAppArgs) -> Result<()> {
    let hang_now = args.hang
        || (args.hang_once
            && !Path::new(HUNG_MARK_FILE).exists()
            && std::fs::write(HUNG_MARK_FILE, "hung once\n").is_ok());
    if hang_now {
        if args.hang_once {
            eprintln!("example-app: hanging once as asked");
        }
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    let slot = Path::new(".");
    let app = if args.no_api {
        BoincApp::standalone(slot)
    } else {
        BoincApp::init().context("cannot attach to the client")?
    };
    if let Some(code) = args.exit_code {
        eprintln!("example-app: exiting with status {code} as asked");
        std::process::exit(code);
    }
    if let Some(how) = args.damage_shared_memory {
        eprintln!("example-app: damaging the shared memory ({how:?}) as asked");
        match how {
            Damage::Garbage => {
                app.damage_shared_memory(|_| b'X');
            }
            Damage::Truncate => {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(boinc_core::protocol::app_api::MMAP_FILE_NAME)
                    .and_then(|f| f.set_len(0))
                    .context("cannot truncate the shared memory")?;
            }
        }
    }
    if let Some(path) = &args.write_outside {
        match std::fs::write(path, "written from outside the slot\n") {
            Ok(()) => eprintln!("example-app: wrote {}", path.display()),
            Err(error) => {
                eprintln!("example-app: cannot write {}: {error}", path.display());
                std::process::exit(1);
            }
        }
    }
    if let Some(bytes) = args.write_bytes {
        if let Err(error) = write_bytes(&app.resolve_filename(&args.output), bytes) {
            eprintln!("example-app: cannot write {bytes} bytes: {error}");
            std::process::exit(1);
        }
        eprintln!("example-app: wrote {bytes} bytes");
    }
    if let Some(bytes) = args.allocate {
        let block = std::hint::black_box(vec![1u8; bytes]);
        eprintln!("example-app: allocated {} bytes", block.len());
    }
    if args.fork_child {
        let child = std::process::Command::new("sleep")
            .arg("600")
            .spawn()
            .context("cannot start a child process")?;
        std::fs::write(CHILD_PID_FILE, child.id().to_string())?;
    }
    if args.flood_stderr {
        flood_stderr();
    }

    let checkpoint_path = slot.join(CHECKPOINT_FILE);
    let restored = Progress::read(&checkpoint_path);
    if let (Some(delay), None) = (args.temporary_exit, restored) {
        Progress::default().write(&checkpoint_path)?;
        eprintln!("example-app: asking to be restarted in {delay} s");
        app.temporary_exit(delay, "example-app asked to wait");
    }
    let mut progress = restored.unwrap_or_default();
    eprintln!(
        "example-app: starting at iteration {} ({:.2} CPU s before this run)",
        progress.iterations, progress.cpu_seconds
    );
    let run_cpu_base = app.cpu_time();
    let run_cpu = || app.cpu_time() - run_cpu_base;
    let target_iterations = args.flops.map(|f| (f / FLOPS_PER_ITERATION).ceil() as u64);
    let target_seconds = args.seconds.unwrap_or(10.0);
    let period = args.checkpoint_period.map(Duration::from_secs_f64);
    let mut last_checkpoint = Instant::now();
    let mut value = if progress.iterations == 0 { 0.5 } else { progress.value };

    loop {
        match app.poll() {
            AppControl::Continue => {}
            control => {
                eprintln!("example-app: the client asked to {control:?}");
                app.exit_for(control);
            }
        }
        value = compute(value, SLICE);
        progress.iterations += SLICE;
        let job_cpu = progress.cpu_seconds + run_cpu();
        let fraction = match target_iterations {
            Some(total) => progress.iterations as f64 / total.max(1) as f64,
            None => job_cpu / target_seconds.max(1e-9),
        };
        if fraction >= 1.0 {
            break;
        }
        app.fraction_done(fraction);
        if args.crash_after.is_some_and(|s| run_cpu() >= s) {
            eprintln!("example-app: crashing as asked");
            crash();
        }
        if args.exit_early_after.is_some_and(|s| run_cpu() >= s) {
            eprintln!("example-app: exiting early as asked");
            std::process::exit(0);
        }
        let due = match period {
            Some(period) => last_checkpoint.elapsed() >= period,
            None => app.time_to_checkpoint(),
        };
        if due {
            let saved = Progress { value, cpu_seconds: job_cpu, ..progress };
            saved.write(&checkpoint_path)?;
            app.checkpoint_completed();
            last_checkpoint = Instant::now();
        }
    }

    let input = match &args.input {
        Some(open_name) => std::fs::read(app.resolve_filename(open_name))
            .with_context(|| format!("cannot read the input {open_name}"))?,
        None => Vec::new(),
    };
    let mut output = input.to_ascii_uppercase();
    output.extend_from_slice(
        format!("result {value:.12} after {} iterations\n", progress.iterations).as_bytes(),
    );
    std::fs::write(app.resolve_filename(&args.output), output)
        .with_context(|| format!("cannot write the output {}", args.output))?;
    eprintln!("example-app: done after {} iterations", progress.iterations);
    if args.no_api {
        std::process::exit(0);
    }
    app.finish(0)
}
