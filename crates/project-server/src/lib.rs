//! `boinc-rs project-server`: a BOINC project on one machine, for volunteers trying
//! boinc-rs, app developers and tests (issue "Talking to real project servers"). It
//! speaks BOINC's protocols, so the real BOINC client attaches to it too: the master
//! page, the scheduler RPC, downloads with byte ranges, uploads by the data server
//! protocol; it signs every executable it serves with its own code-signing key, makes
//! jobs (a fixed number, an endless stock, or one per file dropped into its inbox),
//! validates what comes back in the simplest way, keeps everything in its directory so
//! a restart (even after `kill -9`) loses nothing, and tells its figures at `/status`.
//! For tests of clients it misbehaves on request ([`FaultRule`], posted to
//! `/admin/faults`): HTTP 500, a body that is not XML, a hang, a connection reset, a
//! truncated answer, a huge one (100 MB by default), a trickle, a download with the
//! wrong MD5 or size, executables with a bad or missing signature ([`Fault`] lists
//! them); `/admin/rotate_key` changes the code-signing key, signed by the old one,
//! unsigned or badly signed ([`RolloverSignature`]). README.md, "Faults on purpose",
//! shows the JSON. It is also a minimal
//! account manager ([`AccountManagerConfig`]): hosts that sign in at its URL +
//! `account_manager/` are attached to the projects its directory's
//! `account_manager.json` lists, each URL signed with the manager's own key (never the
//! code-signing key, and never a URL only a request names). It is the only boinc-rs
//! crate that signs: the core verifies.

mod account_manager;
mod apps;
mod atomic_file;
mod config;
mod error;
mod faults;
mod keys;
mod records;
mod reports;
mod routes;
mod scheduler;
mod server;
mod signing;
mod store;
mod uploads;
mod work_generator;

pub use account_manager::{
    ACCOUNT_MANAGER_FILE, ACCOUNT_MANAGER_URLS_FILE, AccountManagerConfig, ManagedProject,
    ManagedUser,
};
pub use config::{
    AppSource, GeneratorConfig, MAX_SCHEDULER_REQUEST_BYTES, NewsItem, ProjectServerConfig,
};
pub use error::ProjectServerError;
pub use faults::{Fault, FaultRule, FaultTarget, HANG_DEFAULT_SECONDS, HUGE_DEFAULT_BYTES};
pub use keys::RolloverSignature;
pub use server::{ProjectServer, URL_FILE};
