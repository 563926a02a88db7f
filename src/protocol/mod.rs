//! BOINC XML formats read into the model (DESIGN.md "Protocol facts"): client_state.xml,
//! global_prefs.xml and its override, cc_config.xml; and the app API's texts
//! ([`app_api`]: shared-memory messages, init_data.xml, link files). Pure functions over
//! text; the caller reads the files.

pub mod acct_mgr;
pub mod app_api;
mod cc_config;
mod client_state;
mod error;
pub mod gui_rpc;
mod host_info;
mod prefs;
mod project;
mod state_files;
mod values;
mod xml_out;
mod xml_tree;

pub use cc_config::parse_cc_config;
pub use client_state::parse_client_state;
pub use error::{XmlError, XmlProblem};
pub use prefs::parse_global_prefs;
pub use state_files::{SourceText, StateFiles, load_state};
