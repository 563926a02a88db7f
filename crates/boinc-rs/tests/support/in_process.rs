//! The host service (`boinc-rs run`) started inside the test process, on a runtime of
//! its own, with GUI RPC on a port the system chose: the tests that drive it with
//! boinccmd or a GUI RPC client and read its state directly share this one start and
//! stop, which waits a bounded time for the service to end.

use boinc_runtime::ClientHandle;
use boinc_runtime::runtime::messages::StateSnapshot;
use boinc_service::service::{Service, ServiceConfig};
use std::path::Path;
use std::time::Duration;

/// The longest a stop waits for the service to end.
const STOP_WAIT: Duration = Duration::from_secs(60);

/// A running service in this process; stopped when dropped.
pub struct InProcessService {
    /// The runtime the service runs on (tests block on it to talk to the service).
    pub runtime: tokio::runtime::Runtime,
    service: Option<Service>,
    /// Where its GUI RPC listens, `127.0.0.1:port`.
    pub gui_rpc: String,
}

impl InProcessService {
    /// Starts the service on the data directory `dir`, GUI RPC on a free port.
    pub fn start(dir: &Path) -> InProcessService {
        let mut config = ServiceConfig::new(dir);
        config.gui_rpc_port = Some(0);
        InProcessService::start_with(config)
    }

    /// Starts the service on `dir`, or says why it did not start (the data directory
    /// still locked by a service just stopped, say).
    pub fn try_start(dir: &Path) -> Result<InProcessService, String> {
        super::host_prefs::ignore_other_programs_cpu(dir);
        let mut config = ServiceConfig::new(dir);
        config.gui_rpc_port = Some(0);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let service = runtime.block_on(Service::start(config)).map_err(|e| format!("{e:?}"))?;
        let gui_rpc = service.gui_rpc.expect("GUI RPC serves").to_string();
        Ok(InProcessService { runtime, service: Some(service), gui_rpc })
    }

    /// Starts the service with `config` (which must ask for GUI RPC).
    pub fn start_with(config: ServiceConfig) -> InProcessService {
        super::host_prefs::ignore_other_programs_cpu(&config.data_dir);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let service = runtime.block_on(Service::start(config)).expect("the service starts");
        let gui_rpc = service.gui_rpc.expect("GUI RPC serves").to_string();
        InProcessService { runtime, service: Some(service), gui_rpc }
    }

    /// The client's handle.
    pub fn handle(&self) -> &ClientHandle {
        &self.service.as_ref().expect("the service is running").handle
    }

    /// The client's state now.
    pub fn snapshot(&self) -> StateSnapshot {
        self.runtime.block_on(self.handle().snapshot()).expect("the client answers")
    }

    /// Stops the service and waits for it to end; panics if it does not end in time or
    /// ends with an error.
    pub fn stop(&mut self) {
        if let Some(service) = self.service.take() {
            service.stop();
            self.runtime
                .block_on(async { tokio::time::timeout(STOP_WAIT, service.finished()).await })
                .expect("the service stops in time")
                .expect("the service stops cleanly");
        }
    }

    /// The service, taken out to be stopped by the test itself.
    pub fn take(&mut self) -> Option<Service> {
        self.service.take()
    }
}

impl Drop for InProcessService {
    fn drop(&mut self) {
        if let Some(service) = self.service.take() {
            service.stop();
            let _ = self
                .runtime
                .block_on(async { tokio::time::timeout(STOP_WAIT, service.finished()).await });
        }
    }
}
