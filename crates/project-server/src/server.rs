//! The project server: what its workers share, and how it starts and stops. It listens
//! on one address; the project's URL (the master page) is `http://ADDRESS:PORT/`, the
//! scheduler `/cgi`, downloads `/download/NAME`, uploads `/file_upload_handler`, the
//! account manager `/account_manager/rpc.php`, the figures `/status`, and the faults on
//! purpose and the account manager's list `/admin/…` (from the loopback only).

use super::account_manager::AccountManager;
use super::apps::{DOWNLOAD_DIR, ServedApp};
use super::atomic_file::write_atomically;
use super::config::{AppSource, ProjectServerConfig};
use super::error::ProjectServerError;
use super::faults::FaultPlan;
use super::keys::ProjectKeys;
use super::routes;
use super::store::Store;
use super::uploads::UPLOAD_DIR;
use super::work_generator::WorkGenerator;
use rand::SeedableRng;
use rand::rngs::StdRng;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Instant;

/// The file in the project directory that holds the project's URL once it listens:
/// written (atomically) after the listener is bound, with the port it got, so a starter
/// that asked for port 0 learns the port there, and finds the file whole or not at all.
pub const URL_FILE: &str = "url";

/// The project's URLs.
#[derive(Debug, Clone)]
pub(crate) struct Urls {
    /// The master URL.
    pub master: String,
    /// The scheduler.
    pub scheduler: String,
    /// Downloads: this and the file name.
    pub download: String,
    /// The upload handler.
    pub upload: String,
    /// The account manager role (clients POST to this + `rpc.php`).
    pub account_manager: String,
    /// The notice feed (RSS).
    pub notices: String,
}

impl Urls {
    fn at(address: SocketAddr) -> Urls {
        let master = format!("http://{address}/");
        Urls {
            scheduler: format!("{master}cgi"),
            download: format!("{master}download/"),
            upload: format!("{master}file_upload_handler"),
            account_manager: format!("{master}account_manager/"),
            notices: format!("{master}notices.php"),
            master,
        }
    }
}

/// Transient figures (not kept across restarts).
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    /// Master page requests.
    pub master_requests: AtomicU64,
    /// Scheduler requests.
    pub scheduler_requests: AtomicU64,
    /// Scheduler requests that could not be read.
    pub bad_scheduler_requests: AtomicU64,
    /// Downloads answered.
    pub downloads: AtomicU64,
    /// Bytes of downloads sent.
    pub download_bytes: AtomicU64,
    /// Upload and size-query requests.
    pub upload_requests: AtomicU64,
    /// Account manager requests.
    pub account_manager_requests: AtomicU64,
    /// The latest scheduler requests' arrivals, oldest first.
    pub scheduler_request_log: Mutex<SchedulerRequestLog>,
}

/// The most scheduler requests [`SchedulerRequestLog`] keeps (a soak of hours makes a
/// few thousand).
const SCHEDULER_REQUEST_LOG_LENGTH: usize = 100_000;

/// One scheduler request's arrival: when (Unix seconds) and the fault it was answered
/// with on purpose, if any; a soak checks the clients' pace against seed 002's backoff
/// with it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub(crate) struct SchedulerRequestArrival {
    /// When it arrived.
    pub at: f64,
    /// The fault's name (`/admin/faults`'s), or none when answered normally.
    pub fault: Option<&'static str>,
}

/// The latest scheduler requests, bounded.
#[derive(Debug, Default)]
pub(crate) struct SchedulerRequestLog {
    arrivals: std::collections::VecDeque<SchedulerRequestArrival>,
}

impl SchedulerRequestLog {
    /// Records an arrival, forgetting the oldest beyond the bound.
    pub(crate) fn record(&mut self, arrival: SchedulerRequestArrival) {
        if self.arrivals.len() == SCHEDULER_REQUEST_LOG_LENGTH {
            self.arrivals.pop_front();
        }
        self.arrivals.push_back(arrival);
    }

    /// The arrivals kept, oldest first.
    pub(crate) fn arrivals(&self) -> impl Iterator<Item = &SchedulerRequestArrival> {
        self.arrivals.iter()
    }
}

/// The apps and the key that signs them (changed together when the key changes).
pub(crate) struct Signing {
    pub apps: Vec<ServedApp>,
    pub keys: ProjectKeys,
}

/// What the server's workers share.
pub(crate) struct ServerState {
    pub config: ProjectServerConfig,
    pub urls: Urls,
    pub download_dir: PathBuf,
    pub upload_dir: PathBuf,
    pub store: Store,
    pub signing: RwLock<Signing>,
    pub generator: WorkGenerator,
    pub rng: Mutex<StdRng>,
    pub faults: FaultPlan,
    pub account_manager: AccountManager,
    pub metrics: Metrics,
    pub started: Instant,
    /// When the server started, seconds since 1970 (its news items' date).
    pub started_at: f64,
    pub last_inbox_scan: Mutex<Option<Instant>>,
}

impl ServerState {
    /// The apps and keys, for reading.
    pub(crate) fn signing(&self) -> std::sync::RwLockReadGuard<'_, Signing> {
        self.signing.read().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A project server, bound and ready to run.
pub struct ProjectServer {
    state: Arc<ServerState>,
    listener: TcpListener,
}

impl ProjectServer {
    /// Opens the project in `config.dir` (records, keys, apps) and binds its address.
    pub fn bind(config: ProjectServerConfig) -> Result<ProjectServer, ProjectServerError> {
        let dir = config.dir.clone();
        std::fs::create_dir_all(&dir).map_err(ProjectServerError::io(&dir))?;
        let store = Store::open(&dir)?;
        let port = config.port.or(store.read(|r| r.port)).unwrap_or(0);
        let address = SocketAddr::new(config.bind, port);
        let listener = TcpListener::bind(address)
            .or_else(|e| {
                // The port of last time is only a preference.
                if config.port.is_none() && port != 0 {
                    TcpListener::bind(SocketAddr::new(config.bind, 0))
                } else {
                    Err(e)
                }
            })
            .map_err(|source| ProjectServerError::Bind { address: address.to_string(), source })?;
        let bound = listener.local_addr().map_err(ProjectServerError::io(&dir))?;
        let urls = Urls::at(bound);

        let keys = ProjectKeys::load_or_create(&dir)?;
        let sources = if config.apps.is_empty() {
            let exe = std::env::current_exe().map_err(ProjectServerError::io("boinc-rs"))?;
            vec![AppSource::ExampleApp { exe }]
        } else {
            config.apps.clone()
        };
        let platform = boinc_core::protocol::platform::boinc_platform();
        let apps = sources
            .iter()
            .map(|source| ServedApp::install(source, &dir, &platform, &keys))
            .collect::<Result<Vec<_>, _>>()?;
        let generator = WorkGenerator::new(config.generator.clone(), &dir)?;
        let upload_dir = dir.join(UPLOAD_DIR);
        std::fs::create_dir_all(&upload_dir).map_err(ProjectServerError::io(&upload_dir))?;

        // Saved with the first request's change, or when the server stops.
        let ((), _change) = store.update(|records| {
            let changed = records.port != Some(bound.port());
            records.port = Some(bound.port());
            ((), changed)
        });
        let url_path = dir.join(URL_FILE);
        write_atomically(&url_path, format!("{}\n", urls.master).as_bytes(), 0o644)
            .map_err(ProjectServerError::io(&url_path))?;
        tracing::info!(url = %urls.master, dir = %dir.display(), apps = apps.len(), "project server ready");
        let state = ServerState {
            download_dir: dir.join(DOWNLOAD_DIR),
            upload_dir,
            urls,
            store,
            signing: RwLock::new(Signing { apps, keys }),
            generator,
            rng: Mutex::new(StdRng::from_os_rng()),
            faults: FaultPlan::default(),
            account_manager: AccountManager::new(&dir),
            metrics: Metrics::default(),
            started: Instant::now(),
            started_at: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
            last_inbox_scan: Mutex::new(None),
            config,
        };
        Ok(ProjectServer { state: Arc::new(state), listener })
    }

    /// The project's URL (its master page).
    pub fn url(&self) -> &str {
        &self.state.urls.master
    }

    /// Serves until the process is asked to stop (SIGINT, SIGTERM), then saves the
    /// records. Runs inside an actix system (`actix_web::rt::System`).
    pub async fn run(self) -> Result<(), ProjectServerError> {
        let state = Arc::clone(&self.state);
        let workers = state.config.workers.max(1);
        let data = actix_web::web::Data::from(Arc::clone(&state));
        let server = actix_web::HttpServer::new(move || {
            actix_web::App::new().app_data(data.clone()).configure(routes::configure)
        })
        .workers(workers)
        .on_connect(routes::remember_connection)
        // Requests held by a hang fault must not hold up a stop for long.
        .shutdown_timeout(2)
        .listen(self.listener)
        .map_err(|source| ProjectServerError::Bind { address: state.urls.master.clone(), source })?
        .run();
        let result = server.await;
        state.store.stop();
        tracing::info!("project server stopped");
        result.map_err(|source| ProjectServerError::Bind {
            address: state.urls.master.clone(),
            source,
        })
    }
}
