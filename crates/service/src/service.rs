//! The host service (`boinc-rs run`; docs/design.md "State", "The drivers"): one client over
//! the real effects in a data directory, for months. It takes the directory's lock,
//! loads client_state.xml (or the copy before it), follows the user's configuration,
//! describes the machine, takes in the account files, and runs the same runtime the
//! emulator drives in virtual time on the wall clock: tasks polled every second, the
//! control loop stepped when it asks, the state written when something that matters
//! changes. Beside the client it serves GUI RPC and watches the account files, so a
//! project attached with `boinc-rs attach` is picked up within seconds, and follows the
//! account manager it was told to use (`account_manager.rs`). It sets the data
//! directory's modes when it starts and, with an app user, runs apps as that user
//! (docs/app-isolation.md).

use super::account_files::{read_account_files, remove_project_files, write_account_file};
use super::account_manager::AccountManagerClient;
use super::atomic_file::write_atomically;
use super::data_dir_modes::{DataDirModesError, set_data_dir_modes};
use super::data_directory::DataDirectory;
use super::host_discovery::{DiscoverySettings, GpuDetector, LiveHostDiscovery};
use super::http::{HttpSettings, LiveNetwork, project_web_rpc};
use super::notices::NoticeFeeds;
use super::preferences_follower::follow_preferences;
use super::process::{AppUser, AppUserError, CpuThrottler, LiveProcessHost, ProcessHostConfig};
use super::project_files::{AppInfoFiles, take_project_files};
use super::state_keeper::StateKeeper;
use super::state_store::{StateStore, StateStoreError};
use boinc_core::control::{
    ClientIdentity, MessagePriority, UserAction, apply_accounts, apply_user_action,
};
use boinc_core::model::{ClientState, ProxyInfo};
use boinc_core::protocol::gui_rpc::AccountManagerTarget;
use boinc_gui_rpc::{
    AccountManagerInfo, GuiRpcConfig, GuiRpcError, GuiRpcServer, HostServices, LocalRpc,
    MessageSink,
};
use boinc_runtime::client::{Client, ClientError, ClientHandle, Effects, RunReport};
use boinc_runtime::configuration_files::read_configuration_dir;
use boinc_runtime::effects::{Clock, HostDiscovery, SystemClock};
use boinc_runtime::journal::Journal;
use futures_util::future::BoxFuture;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// How often the account files are looked at (BOINC's client looks as often).
const ACCOUNT_SCAN_INTERVAL: Duration = Duration::from_secs(5);

/// How long a stopping service waits for the client's thread to end (its actors let go
/// of the state store, and the data directory's lock with it, as they are dropped).
const CLIENT_THREAD_WAIT: Duration = Duration::from_secs(20);

/// The file in the data directory that holds the GUI RPC port the service listens on
/// (a decimal number and a newline): removed at start, written (atomically) once the
/// listener is bound, removed again when the service stops. A starter that asked for
/// port 0 reads the port the system gave from it; while it is missing the service does
/// not serve GUI RPC yet (or any more).
pub const GUI_RPC_PORT_FILE: &str = "gui_rpc_port";

/// How the service runs.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// The data directory.
    pub data_dir: PathBuf,
    /// The GUI RPC port (BOINC's 31416; 0 picks a free one); `None`: no GUI RPC.
    pub gui_rpc_port: Option<u16>,
    /// How often tasks are polled (BOINC polls its apps once a second).
    pub tick_interval: Duration,
    /// The user apps run as (`--app-user`; `None`: the client's own user). The client
    /// refuses to start when it cannot run apps as this user.
    pub app_user: Option<String>,
    /// The program GPUs are looked for with, in a process of its own (`boinc-rs
    /// detect-gpus`); `None`: in the client's process.
    pub gpu_detector: Option<GpuDetector>,
    /// Where every input the client takes in is journaled, for `boinc-rs replay`
    /// (`run --journal`), and the size past which the file becomes `FILE.1`.
    pub journal: Option<(PathBuf, u64)>,
}

impl ServiceConfig {
    /// BOINC's defaults for the data directory `dir`.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        ServiceConfig {
            data_dir: data_dir.into(),
            gui_rpc_port: Some(31416),
            tick_interval: Duration::from_secs(1),
            app_user: None,
            gpu_detector: None,
            journal: None,
        }
    }
}

/// Writes a port file in the data directory ([`GUI_RPC_PORT_FILE`], or the web
/// dashboard's), atomically: a reader sees the whole number or no file. A failure is
/// only logged: the server serves all the same, on the port it was given.
pub fn write_port_file(dir: &Path, name: &str, port: u16) {
    let temporary = format!(".{name}.tmp");
    let written = write_atomically(dir, name, &temporary, None, format!("{port}\n").as_bytes());
    if let Err(error) = written {
        tracing::warn!(%error, file = name, "cannot write the port file");
    }
}

/// Removes a port file (gone already is fine).
pub fn remove_port_file(dir: &Path, name: &str) {
    let path = dir.join(name);
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => {
            tracing::warn!(%error, path = %path.display(), "cannot remove the GUI RPC port file")
        }
    }
}

/// Why the service could not start or stopped badly.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// The data directory cannot be created.
    #[error("cannot create the data directory {dir}: {source}; check the path and its permissions")]
    DataDirectory {
        /// The directory.
        dir: PathBuf,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The state could not be opened or read (another client holds the directory, or
    /// every copy of the state is damaged).
    #[error(transparent)]
    State(#[from] StateStoreError),
    /// The machine could not be described.
    #[error("cannot describe this machine: {0}")]
    Host(#[from] boinc_runtime::effects::HostDiscoveryError),
    /// Apps cannot run as the app user asked for.
    #[error(transparent)]
    AppUser(#[from] AppUserError),
    /// The data directory's owners or modes cannot be set.
    #[error(transparent)]
    Modes(#[from] DataDirModesError),
    /// The process host could not be set up.
    #[error("cannot prepare to run apps: {0}")]
    Processes(#[from] boinc_runtime::effects::ProcessError),
    /// A thread of the service could not be started.
    #[error("cannot start the {what} thread: {source}; the system may be out of threads or memory")]
    Thread {
        /// What the thread does.
        what: &'static str,
        /// The system's error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be set up.
    #[error("cannot set up the network: {0}")]
    Network(#[from] super::http::HttpSetupError),
    /// The GUI RPC server could not start.
    #[error(transparent)]
    GuiRpc(#[from] GuiRpcError),
    /// The client failed.
    #[error(transparent)]
    Client(#[from] ClientError),
}

/// A running service: its client, and where its GUI RPC listens.
pub struct Service {
    /// The client.
    pub handle: ClientHandle,
    dir: PathBuf,
    /// The GUI RPC server's address, when it serves.
    pub gui_rpc: Option<SocketAddr>,
    /// The GUI RPC server's operations, for a front end in this process (the web
    /// dashboard of `boinc-rs run`), when it serves.
    pub gui_rpc_local: Option<LocalRpc>,
    gui_rpc_task: Option<tokio::task::JoinHandle<Result<(), GuiRpcError>>>,
    notice_task: Option<tokio::task::JoinHandle<()>>,
    account_task: tokio::task::JoinHandle<()>,
    account_manager_task: tokio::task::JoinHandle<()>,
    /// Web preferences kept and applied; the discovery's settings in step.
    prefs_task: tokio::task::JoinHandle<()>,
}

impl Service {
    /// Starts the service (call it on a tokio runtime: the GUI RPC server and the
    /// account watcher run there; the client runs on a thread of its own).
    pub async fn start(config: ServiceConfig) -> Result<Service, ServiceError> {
        let dir = config.data_dir.clone();
        std::fs::create_dir_all(&dir)
            .map_err(|source| ServiceError::DataDirectory { dir: dir.clone(), source })?;
        let store = match allows_multiple_clients(&dir) {
            true => StateStore::open_allowing_others(&dir)?,
            false => StateStore::open(&dir)?,
        };
        let app_user = config.app_user.as_deref().map(AppUser::look_up).transpose()?;
        set_data_dir_modes(&dir, app_user.as_ref().map(|user| user.gid))?;
        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let now = clock.now();
        let loaded = store.load()?;
        let mut state = match &loaded {
            Some(loaded) => {
                for problem in &loaded.passed_over {
                    tracing::warn!(%problem, "a damaged copy of the state was passed over");
                }
                tracing::info!(file = loaded.file, jobs = loaded.state.jobs.len(), "state loaded");
                loaded.state.clone()
            }
            None => {
                tracing::info!(dir = %dir.display(), "no state yet: a new client");
                ClientState::default()
            }
        };
        // The accounts first: a project's app_config.xml, there before the project's
        // first reply, is read with the rest.
        take_account_files(&dir, &mut state);
        let app_info = AppInfoFiles::read(&dir, &state);
        app_info.take(&mut state);
        let configuration_warnings = apply_configuration(&dir, &mut state);
        let mut discovery = LiveHostDiscovery::new(
            &dir,
            clock.clone(),
            DiscoverySettings::follow(&state.prefs, &state.config),
        );
        if let Some(detector) = config.gpu_detector.clone() {
            discovery = discovery.with_gpu_detector(detector);
        }
        let discovery = Arc::new(discovery);
        describe_host(&discovery, &mut state).await?;
        app_info.take(&mut state);
        let mut process_config = ProcessHostConfig::new(&dir);
        process_config.app_user = app_user;
        let process_host = Arc::new(LiveProcessHost::new(process_config, clock.clone())?);
        let throttler = CpuThrottler::start(&process_host, state.prefs.cpu_usage_limit)
            .map_err(|source| ServiceError::Thread { what: "CPU throttle", source })?;
        let network =
            LiveNetwork::new(HttpSettings::new(&state.config, &ClientIdentity::default()), &dir)?;
        let keeper = Arc::new(StateKeeper::new(store, loaded.as_ref().map(|l| &l.state), now));
        let allow_remote = state.config.allow_remote_gui_rpc;
        let max_event_log = state.config.max_stdout_file_size;
        let project_names: HashMap<String, String> =
            state.projects.iter().map(|p| (p.master_url.clone(), p.name.clone())).collect();
        let notice_http = network.client.clone();
        let host_discovery = discovery.clone();
        let prefs_discovery = discovery.clone();
        let effects = Effects {
            clock,
            process_host,
            transport: network.transport.clone(),
            host_discovery: discovery,
            file_transfer: Some(network.file_transfer.clone()),
            file_system: Some(Arc::new(DataDirectory::new(&dir))),
            persistence: Some(keeper),
            tick_interval: config.tick_interval,
        };
        let transport = network.transport.clone();
        let manager_clock = effects.clock.clone();
        // Every host draws its own random stream (backoffs, restart delays): after a
        // project's outage a fleet that shared one would retry in lockstep.
        let seed = live_seed(&state.host.description.host_cpid);
        tracing::debug!(seed, "random stream");
        let mut builder = Client::builder().state(state).effects(effects).seed(seed);
        if let Some((path, limit)) = &config.journal {
            let journal = Journal::live_to_file(path, *limit)
                .map_err(|e| ClientError::Journal(e.to_string()))?;
            builder = builder.journal(journal);
        }
        let handle = builder.start()?;
        let account_manager =
            Arc::new(AccountManagerClient::new(&dir, handle.clone(), transport, manager_clock));
        // A port file a killed service left behind names a port nobody listens on.
        remove_port_file(&dir, GUI_RPC_PORT_FILE);
        let mut notice_task = None;
        let event_log: Arc<OnceLock<MessageSink>> = Arc::default();
        let mut gui_rpc_local = None;
        let (gui_rpc, gui_rpc_task) = match config.gui_rpc_port {
            Some(port) => {
                let mut rpc = GuiRpcConfig::new(&dir).port(port);
                rpc.allow_remote = allow_remote;
                let services: Arc<dyn HostServices> = Arc::new(ServiceHostServices {
                    dir: dir.clone(),
                    client: handle.clone(),
                    account_manager: account_manager.clone(),
                    network: network.clone(),
                    discovery: host_discovery,
                    event_log: event_log.clone(),
                });
                let server =
                    match GuiRpcServer::bind_with(rpc, handle.clone(), Some(services)).await {
                        Ok(server) => server,
                        Err(error) => {
                            handle.shutdown();
                            return Err(error.into());
                        }
                    };
                let address = server.local_addr();
                tracing::info!(%address, "GUI RPC listening");
                let sink = server.messages();
                sink.write_to_file(&dir, max_event_log);
                // What the configuration files got wrong goes to the event log as well,
                // where boinccmd and the Manager show it (BOINC's "unrecognized tag").
                for warning in &configuration_warnings {
                    sink.push(now, "", MessagePriority::UserAlert, warning);
                }
                for (project, priority, text) in &app_info.lines {
                    sink.push(now, project, *priority, text);
                }
                let _ = event_log.set(sink.clone());
                let feeds = NoticeFeeds::new(&dir, notice_http, sink, &project_names);
                notice_task = Some(tokio::spawn(feeds.run(handle.events())));
                gui_rpc_local = Some(server.local());
                write_port_file(&dir, GUI_RPC_PORT_FILE, address.port());
                (Some(address), Some(tokio::spawn(server.serve())))
            }
            None => (None, None),
        };
        let account_task =
            tokio::spawn(watch_account_files(dir.clone(), handle.clone(), event_log.clone()));
        let prefs_task = tokio::spawn(follow_preferences(
            dir.clone(),
            handle.clone(),
            prefs_discovery,
            throttler,
            handle.events(),
        ));
        let account_manager_task = tokio::spawn(account_manager.run());
        Ok(Service {
            handle,
            dir,
            gui_rpc,
            gui_rpc_local,
            gui_rpc_task,
            notice_task,
            account_task,
            account_manager_task,
            prefs_task,
        })
    }

    /// Waits until the client stops (a GUI RPC `quit`, or [`Service::stop`]), then stops
    /// what ran beside it.
    ///
    /// When it returns, the data directory is free for another client: the tasks beside
    /// the client have ended and the client's thread, whose actors keep the state store
    /// and with it the directory's lock, has exited (waited for a bounded time). A service
    /// restarted in the same process found the directory still locked otherwise.
    pub async fn finished(self) -> Result<RunReport, ServiceError> {
        let report = self.handle.finished().await;
        let mut beside = vec![self.account_task, self.prefs_task, self.account_manager_task];
        beside.extend(self.notice_task);
        for task in &beside {
            task.abort();
        }
        for task in beside {
            // Cancelled: the wait only makes sure the task's future is gone.
            let _ = task.await;
        }
        if let Some(task) = self.gui_rpc_task {
            task.abort();
            let _ = task.await;
            remove_port_file(&self.dir, GUI_RPC_PORT_FILE);
        }
        let handle = self.handle.clone();
        let joined = tokio::task::spawn_blocking(move || handle.join());
        if tokio::time::timeout(CLIENT_THREAD_WAIT, joined).await.is_err() {
            tracing::warn!(
                "the client's thread has not ended {} s after the client stopped",
                CLIENT_THREAD_WAIT.as_secs()
            );
        }
        Ok(report?)
    }

    /// Asks the client to stop: tasks are asked to quit and the state is written.
    pub fn stop(&self) {
        self.handle.shutdown();
    }
}

/// Whether cc_config.xml in `dir` says `<allow_multiple_clients>`: read before the
/// directory is taken, as the option decides whether a second client may take it. A
/// missing, unreadable or bad file says no (its problems are told when it is read for
/// good).
fn allows_multiple_clients(dir: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(dir.join(boinc_core::protocol::data_dir::CC_CONFIG)) else {
        return false;
    };
    let mut text = String::new();
    if file.take(1 << 20).read_to_string(&mut text).is_err() {
        return false;
    }
    boinc_core::protocol::read_cc_config(&text, "cc_config.xml")
        .is_ok_and(|(config, _)| config.allow_multiple_clients)
}

/// The user's configuration files taken into the state, the log flags into the log's
/// filter; what was wrong is logged, once each, and returned for the event log.
fn apply_configuration(dir: &Path, state: &mut ClientState) -> Vec<String> {
    let (configuration, warnings) = read_configuration_dir(dir, state);
    for problem in &warnings {
        tracing::warn!(%problem, "configuration");
    }
    for action in configuration.user_actions() {
        if let Err(error) = apply_user_action(state, &action, 0.0) {
            tracing::warn!(%error, "configuration not applied");
        }
    }
    super::log_filter::follow_log_flags(&state.config);
    warnings
}

/// The machine described, off the async threads (the benchmarks take seconds): the
/// benchmarks run only when the state has none yet.
async fn describe_host(
    discovery: &Arc<LiveHostDiscovery>,
    state: &mut ClientState,
) -> Result<(), ServiceError> {
    let run_benchmarks = state.host.description.p_calculated <= 0.0;
    let discovery = discovery.clone();
    let found = tokio::task::spawn_blocking(move || discovery.describe(run_benchmarks))
        .await
        .map_err(|e| ServiceError::Client(ClientError::Stopped(e.to_string())))??;
    state.host = state.host.refreshed(found);
    if state.host.description.host_cpid.is_empty() {
        state.host.description.host_cpid = new_host_cpid(&state.host.description.domain_name);
        tracing::info!(host_cpid = %state.host.description.host_cpid, "a new host identity");
    }
    if state.host.coprocessors.iter().all(|(_, c)| c.is_none()) {
        tracing::info!("no GPU found: computing on the CPUs only");
    }
    tracing::info!(
        ncpus = state.host.p_ncpus,
        fpops = state.host.p_fpops,
        memory = state.host.m_nbytes,
        "host described"
    );
    Ok(())
}

/// A host's cross-project identity, made once and kept in the state: projects and
/// account managers tell one host from another by it, so two hosts never share one
/// (random bytes, with the host's name and the time, hashed as BOINC's client does).
fn new_host_cpid(domain_name: &str) -> String {
    use rand::RngCore;
    let mut seed = [0u8; 32];
    rand::rng().fill_bytes(&mut seed);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let mut text = format!("{domain_name}{now}").into_bytes();
    text.extend_from_slice(&seed);
    boinc_core::protocol::code_signing::md5_hex(&text)
}

/// The seed of a live client's random stream: the operating system's entropy, mixed
/// with the host's identity so that two hosts differ even where that entropy is poor.
fn live_seed(host_cpid: &str) -> u64 {
    let identity = boinc_core::protocol::code_signing::md5_hex(host_cpid.as_bytes());
    let from_identity = u64::from_str_radix(&identity[..16], 16).unwrap_or_default();
    rand::random::<u64>() ^ from_identity
}

/// The account files of the directory taken into the state.
fn take_account_files(dir: &Path, state: &mut ClientState) {
    match read_account_files(dir) {
        Ok(files) => {
            for problem in &files.problems {
                tracing::warn!(%problem, "an account file could not be read");
            }
            let changes = apply_accounts(state, &files.accounts);
            for project in changes.attached {
                tracing::info!(project = %state.project(project).master_url, "attached");
            }
        }
        Err(error) => tracing::warn!(%error, "the account files could not be read"),
    }
}

/// Looks at the account files every few seconds and attaches the client to each new
/// one (or takes a changed key), until the client stops.
async fn watch_account_files(
    dir: PathBuf,
    client: ClientHandle,
    event_log: Arc<OnceLock<MessageSink>>,
) {
    let mut interval = tokio::time::interval(ACCOUNT_SCAN_INTERVAL);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let files = match read_account_files(&dir) {
            Ok(files) => files,
            Err(error) => {
                tracing::warn!(%error, "the account files could not be read");
                continue;
            }
        };
        let Ok(snapshot) = client.snapshot().await else { return };
        for account in files.accounts {
            let known = snapshot.state.project_by_url(&account.master_url).is_some_and(|p| {
                let project = snapshot.state.project(p);
                !project.detached && project.authenticator == account.authenticator
            });
            if known || account.master_url.is_empty() || account.authenticator.is_empty() {
                continue;
            }
            let action = UserAction::AttachAccount {
                master_url: account.master_url.clone(),
                authenticator: account.authenticator,
                project_name: account.project_name,
            };
            match client.act(action).await {
                Ok(()) => {
                    tracing::info!(project = %account.master_url, "attached from its account file");
                    take_project_files(&dir, &client, &account.master_url, event_log.get()).await;
                }
                Err(ClientError::Action(error)) => {
                    tracing::warn!(%error, project = %account.master_url, "account file not taken")
                }
                Err(_) => return,
            }
        }
    }
}

/// What the service does for a GUI RPC client beyond the client's own operations.
struct ServiceHostServices {
    dir: PathBuf,
    client: ClientHandle,
    account_manager: Arc<AccountManagerClient>,
    network: LiveNetwork,
    discovery: Arc<LiveHostDiscovery>,
    /// The event log, once the GUI RPC server holding it is bound.
    event_log: Arc<OnceLock<MessageSink>>,
}

impl HostServices for ServiceHostServices {
    fn attach_project(
        &self,
        master_url: String,
        authenticator: String,
        project_name: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        let dir = self.dir.clone();
        let client = self.client.clone();
        let event_log = self.event_log.clone();
        Box::pin(async move {
            // The account file first: the attachment survives a restart.
            let written = write_account_file(&dir, &master_url, &authenticator)
                .map_err(|error| error.to_string())?;
            tracing::info!(file = %written.display(), "account file written");
            let action = UserAction::AttachAccount {
                master_url: master_url.clone(),
                authenticator,
                project_name: (!project_name.is_empty()).then_some(project_name),
            };
            client.act(action).await.map_err(|error| error.to_string())?;
            // What the volunteer put in the project's directory before attaching
            // applies from the start, as it does for a project attached before a start.
            take_project_files(&dir, &client, &master_url, event_log.get()).await;
            Ok(())
        })
    }

    fn project_detached(&self, master_url: String) -> BoxFuture<'static, Result<(), String>> {
        let dir = self.dir.clone();
        Box::pin(async move {
            let removed =
                remove_project_files(&dir, &master_url).map_err(|error| error.to_string())?;
            tracing::info!(project = %master_url, files = removed.len(), "detached: files removed");
            Ok(())
        })
    }

    fn account_manager_rpc(
        &self,
        target: AccountManagerTarget,
    ) -> BoxFuture<'static, Result<(), String>> {
        let manager = self.account_manager.clone();
        Box::pin(async move {
            let done = match target {
                AccountManagerTarget::Configured => manager.request().await,
                AccountManagerTarget::Account { url, name, password } => {
                    manager.join(&url, &name, &password).await
                }
            };
            done.map_err(|error| error.to_string())
        })
    }

    fn account_manager(&self) -> AccountManagerInfo {
        self.account_manager.info()
    }

    fn project_web_rpc(
        &self,
        master_url: String,
        page: &'static str,
        query: Vec<(&'static str, String)>,
    ) -> BoxFuture<'static, Result<String, String>> {
        let http = self.network.client.get();
        Box::pin(async move { project_web_rpc(&http, &master_url, page, &query).await })
    }

    fn run_benchmarks(&self) -> BoxFuture<'static, Result<String, String>> {
        let discovery = self.discovery.clone();
        Box::pin(async move {
            let found = tokio::task::spawn_blocking(move || discovery.discover(true))
                .await
                .map_err(|_| "the benchmarks stopped".to_string())?
                .map_err(|error| error.to_string())?;
            let Some(figures) = found.benchmark else {
                return Err("the benchmarks did not run".into());
            };
            Ok(format!(
                "Benchmark results: {} CPUs, {:.0} floating point MIPS (Whetstone) per CPU, {:.0} \
                 integer MIPS (Dhrystone) per CPU",
                found.host.p_ncpus,
                figures.fpops / 1e6,
                figures.iops / 1e6
            ))
        })
    }

    fn use_proxy(&self, proxy: &ProxyInfo) -> Result<(), String> {
        self.network.use_proxy(proxy).map_err(|error| error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::live_seed;

    /// Two hosts, or one host started twice, draw different random streams: a fleet
    /// never backs off in lockstep.
    #[test]
    fn every_live_client_draws_its_own_random_stream() {
        let seeds: Vec<u64> =
            ["host-a", "host-a", "host-b", ""].iter().map(|cpid| live_seed(cpid)).collect();
        for (i, a) in seeds.iter().enumerate() {
            for b in &seeds[i + 1..] {
                assert_ne!(a, b, "{seeds:?}");
            }
        }
    }
}
