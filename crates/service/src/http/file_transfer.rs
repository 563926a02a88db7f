//! The live [`FileTransfer`]: downloads and uploads over HTTP in the client's data
//! directory. Orders name paths relative to the directory (the core's
//! `projects/NAME/FILE` and `downloads/NAME/FILE`); one that would lead outside it is
//! refused, whatever a project put in a file name.

use super::download::{DownloadPaths, download};
use super::settings::{HttpSettings, HttpSetupError};
use super::shared_client::SharedClient;
use super::throttle::{Pace, Throttle};
use super::upload::upload;
use boinc_core::transfer::TransferOrder;
use boinc_runtime::effects::{
    EffectFuture, FileTransfer, ProgressSink, TransferError, Transferred,
};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// Downloads and uploads over HTTP, in a data directory.
#[derive(Clone)]
pub struct LiveFileTransfer {
    client: SharedClient,
    settings: Arc<HttpSettings>,
    data_dir: PathBuf,
    /// The rate limits' clocks: downloads, uploads.
    throttles: Arc<[Arc<Throttle>; 2]>,
}

impl LiveFileTransfer {
    /// Transfers in `data_dir` with `settings`.
    pub fn new(
        settings: HttpSettings,
        data_dir: impl Into<PathBuf>,
    ) -> Result<Self, HttpSetupError> {
        Ok(Self::with_client(settings.client()?, Arc::new(settings), data_dir))
    }

    /// Transfers sharing `client` (and its connections) with other users.
    pub fn with_client(
        client: impl Into<SharedClient>,
        settings: Arc<HttpSettings>,
        data_dir: impl Into<PathBuf>,
    ) -> Self {
        LiveFileTransfer {
            client: client.into(),
            settings,
            data_dir: data_dir.into(),
            throttles: Arc::default(),
        }
    }

    /// `relative` inside the data directory; an absolute path or one climbing out is
    /// refused.
    fn inside(&self, relative: &str) -> Result<PathBuf, TransferError> {
        let path = Path::new(relative);
        let plain =
            !relative.is_empty() && path.components().all(|c| matches!(c, Component::Normal(_)));
        if plain {
            Ok(self.data_dir.join(path))
        } else {
            Err(TransferError::UnsafePath { path: relative.to_owned() })
        }
    }

    fn paths(&self, order: &TransferOrder) -> Result<DownloadPaths, TransferError> {
        Ok(DownloadPaths {
            staging: self.inside(&order.staging_path)?,
            target: self.inside(&order.path)?,
        })
    }
}

impl FileTransfer for LiveFileTransfer {
    fn download(
        &self,
        order: &TransferOrder,
        progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        let this = self.clone();
        let order = order.clone();
        Box::pin(async move {
            let paths = this.paths(&order)?;
            let pace = Pace::new(this.throttles[0].clone(), order.max_bytes_sec);
            download(&this.client.get(), &this.settings, &order, &paths, progress, pace).await
        })
    }

    fn upload(
        &self,
        order: &TransferOrder,
        progress: ProgressSink,
    ) -> EffectFuture<Result<Transferred, TransferError>> {
        let this = self.clone();
        let order = order.clone();
        Box::pin(async move {
            let path = this.inside(&order.path)?;
            let pace = Pace::new(this.throttles[1].clone(), order.max_bytes_sec);
            upload(&this.client.get(), &this.settings, &order, &path, progress, pace).await
        })
    }

    fn install(&self, order: &TransferOrder) -> Result<(), TransferError> {
        let paths = self.paths(order)?;
        let disk = |path: &Path, e: std::io::Error| TransferError::Disk {
            path: path.to_owned(),
            reason: e.to_string(),
        };
        if let Some(parent) = paths.target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| disk(parent, e))?;
        }
        // An executable may run once in place (the core put it here only after its
        // signature checked out); other files are only read.
        let mode = if order.executable { 0o755 } else { 0o644 };
        std::fs::set_permissions(&paths.staging, std::fs::Permissions::from_mode(mode))
            .map_err(|e| disk(&paths.staging, e))?;
        // Same file system: the file appears whole under its name, or not at all.
        std::fs::rename(&paths.staging, &paths.target).map_err(|e| disk(&paths.target, e))
    }

    fn discard(&self, order: &TransferOrder) -> Result<(), TransferError> {
        if order.staging_path.is_empty() {
            return Ok(());
        }
        let staging = self.inside(&order.staging_path)?;
        match std::fs::remove_file(&staging) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(TransferError::Disk { path: staging, reason: e.to_string() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use boinc_core::control::ClientIdentity;
    use boinc_core::model::CcConfig;

    #[test]
    fn paths_stay_in_the_data_directory() {
        let settings = HttpSettings::new(&CcConfig::default(), &ClientIdentity::default());
        let transfer = LiveFileTransfer::new(settings, "/data").expect("client");
        assert_eq!(
            transfer.inside("projects/p/f").expect("inside"),
            Path::new("/data/projects/p/f")
        );
        for bad in ["", "/etc/passwd", "projects/../../etc", "../x", "projects/p/..", "./x"] {
            assert!(
                matches!(transfer.inside(bad), Err(TransferError::UnsafePath { .. })),
                "{bad:?}"
            );
        }
    }
}
