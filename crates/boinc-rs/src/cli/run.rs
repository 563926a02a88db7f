//! `boinc-rs run --dir DIR [--gui-rpc-port P] [--web-port P | --no-web] [--app-user USER]`:
//! the host service (see [`boinc_service::service`]), with its web dashboard
//! (docs/dashboard.md), until SIGTERM, SIGINT or a GUI RPC `quit`; then the tasks are
//! asked to quit and the state is written before it exits.

use anyhow::{Context, Result};
use boinc_service::host_discovery::{DEFAULT_DETECTION_TIMEOUT, GpuDetector};
use boinc_service::service::{Service, ServiceConfig, remove_port_file, write_port_file};
use boinc_web::{WEB_PORT_FILE, WebServer};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long the dashboard gets to close its connections once the client has stopped.
const WEB_STOP_WAIT: Duration = Duration::from_secs(5);

/// The arguments of `run`.
#[derive(clap::Args)]
pub(crate) struct RunArgs {
    /// The data directory (created if missing): client_state.xml, account files, the
    /// configuration files, projects/ and slots/.
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: PathBuf,
    /// The GUI RPC port (boinccmd, boinctui and `boinc-rs status` connect to it); 0: one
    /// the system picks. The port is written to DIR/gui_rpc_port once it listens.
    #[arg(long, value_name = "P", default_value_t = boinc_gui_rpc::DEFAULT_PORT)]
    gui_rpc_port: u16,
    /// Serve no GUI RPC at all (and so no web dashboard, which works through it).
    #[arg(long, conflicts_with_all = ["gui_rpc_port", "web_port"])]
    no_gui_rpc: bool,
    /// The web dashboard's port, on 127.0.0.1 (every interface when remote GUI RPC is
    /// allowed); 0: one the system picks. The port is written to DIR/web_port.
    #[arg(long, value_name = "P", default_value_t = boinc_web::DEFAULT_WEB_PORT)]
    web_port: u16,
    /// Serve no web dashboard (nor /metrics).
    #[arg(long, conflicts_with = "web_port")]
    no_web: bool,
    /// Run apps as this user (BOINC's boinc_project account): the client must run as
    /// root or with CAP_SETUID and CAP_SETGID; projects/ and slots/ go to the user's
    /// primary group (docs/app-isolation.md).
    #[arg(long, value_name = "USER")]
    app_user: Option<String>,
    /// Journal every input the client takes in (ticks, replies, transfers, process
    /// reports, disk readings, user actions) to FILE, for `boinc-rs replay FILE`.
    #[arg(long, value_name = "FILE")]
    journal: Option<PathBuf>,
    /// Past this size the journal is renamed FILE.1 (an older one replaced) and a new
    /// FILE goes on.
    #[arg(long, value_name = "MB", default_value_t = 256, requires = "journal")]
    journal_limit_mb: u64,
    /// Write the log as JSON lines (one object per event) instead of text.
    #[arg(long)]
    pub(crate) log_json: bool,
}

/// Runs the service until it is told to stop.
pub(crate) fn run(args: RunArgs) -> Result<()> {
    // One thread serves GUI RPC, watches the account files and talks to the account
    // manager (none of it is heavy: BOINC's client does all of it on one); the client
    // runs on a thread of its own. A volunteer's machine sees two threads when idle.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the service's runtime")?;
    runtime.block_on(async move {
        // Listened for before the service starts: a SIGTERM that comes as soon as the
        // GUI RPC port is reported (DIR/gui_rpc_port) stops the service cleanly.
        let mut stop_signals = StopSignals::listen();
        let mut config = ServiceConfig::new(&args.dir);
        config.gui_rpc_port = (!args.no_gui_rpc).then_some(args.gui_rpc_port);
        config.app_user = args.app_user.clone();
        config.gpu_detector = gpu_detector();
        config.journal =
            args.journal.clone().map(|path| (path, args.journal_limit_mb.saturating_mul(1 << 20)));
        let service = Service::start(config)
            .await
            .with_context(|| format!("cannot start the client in {}", args.dir.display()))?;
        if let Some(address) = service.gui_rpc {
            tracing::info!(%address, dir = %args.dir.display(), "boinc-rs is running");
        }
        // A port file a killed client left behind names a port nobody listens on.
        remove_port_file(&args.dir, WEB_PORT_FILE);
        let local = service.gui_rpc_local.clone().filter(|_| !args.no_web);
        let web = match local {
            Some(local) => match start_web(&args.dir, args.web_port, local) {
                Ok(task) => Some(task),
                Err(error) => {
                    service.stop();
                    let _ = service.finished().await;
                    return Err(error);
                }
            },
            None => None,
        };
        let handle = service.handle.clone();
        let signals = tokio::spawn(async move {
            if let Some(name) = stop_signals.next().await {
                tracing::info!(
                    signal = name,
                    "stopping: tasks are asked to quit, then the state is written"
                );
            }
            handle.shutdown();
        });
        let report = service.finished().await;
        signals.abort();
        if let Some(task) = web {
            // It stops by itself when the client does.
            let _ = tokio::time::timeout(WEB_STOP_WAIT, task).await;
            remove_port_file(&args.dir, WEB_PORT_FILE);
        }
        let report = report.context("the client stopped with an error")?;
        tracing::info!(decisions = report.decisions, rpcs = report.rpcs, "stopped");
        Ok(())
    })
}

/// Binds the web dashboard (docs/dashboard.md) over the GUI RPC server's operations,
/// writes its port to DIR/web_port, and serves it until the client stops.
fn start_web(
    dir: &Path,
    port: u16,
    local: boinc_gui_rpc::LocalRpc,
) -> Result<tokio::task::JoinHandle<Result<(), boinc_web::WebError>>> {
    let web = WebServer::bind(port, local).context("cannot start the web dashboard")?;
    let address = web.local_addr();
    tracing::info!(%address, "the web dashboard: http://{address}/ (log in with the password in gui_rpc_auth.cfg)");
    write_port_file(dir, WEB_PORT_FILE, address.port());
    Ok(tokio::spawn(web.serve()))
}

/// SIGTERM and SIGINT, listened for (their default action, ending the process at once,
/// is off from then on).
struct StopSignals(Option<(tokio::signal::unix::Signal, tokio::signal::unix::Signal)>);

impl StopSignals {
    fn listen() -> StopSignals {
        use tokio::signal::unix::{SignalKind, signal};
        match (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) {
            (Ok(terminate), Ok(interrupt)) => StopSignals(Some((terminate, interrupt))),
            _ => {
                tracing::warn!("cannot listen for SIGTERM and SIGINT");
                StopSignals(None)
            }
        }
    }

    /// The next of them; never, when they cannot be listened for (the service then
    /// stops only through GUI RPC).
    async fn next(&mut self) -> Option<&'static str> {
        let Some((terminate, interrupt)) = &mut self.0 else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = terminate.recv() => Some("SIGTERM"),
            _ = interrupt.recv() => Some("SIGINT"),
        }
    }
}

/// GPUs are looked for by this binary run as `detect-gpus`, a process of its own, so
/// that a GPU driver that crashes or hangs cannot take the client with it; where the
/// binary cannot name itself, in the client's process.
pub(crate) fn gpu_detector() -> Option<GpuDetector> {
    match std::env::current_exe() {
        Ok(program) => Some(GpuDetector {
            program,
            args: vec!["detect-gpus".into()],
            timeout: DEFAULT_DETECTION_TIMEOUT,
        }),
        Err(error) => {
            tracing::warn!(%error, "GPUs looked for in the client's own process");
            None
        }
    }
}
