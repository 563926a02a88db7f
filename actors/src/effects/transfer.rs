//! Downloads and uploads of project files.

use super::transport::EffectFuture;
use boinc_core::model::ProjectId;

/// One file to move.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transfer {
    /// The project the file belongs to.
    pub project: ProjectId,
    /// File name.
    pub name: String,
    /// Size, bytes.
    pub nbytes: f64,
}

/// Downloads and uploads.
pub trait FileTransfer: Send + Sync {
    /// Downloads a file; whether it arrived intact.
    fn download(&self, transfer: &Transfer) -> EffectFuture<bool>;
    /// Uploads a file; whether the server took it.
    fn upload(&self, transfer: &Transfer) -> EffectFuture<bool>;
}
