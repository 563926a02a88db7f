//! BOINC XML formats read into the model (DESIGN.md "Protocol facts"): client_state.xml,
//! global_prefs.xml and its override, cc_config.xml. Pure functions over text; the caller
//! reads the files.

mod cc_config;
mod client_state;
mod error;
mod host_info;
mod prefs;
mod project;
mod state_files;
mod values;
mod xml_tree;

pub use cc_config::parse_cc_config;
pub use client_state::{parse_client_state, parse_client_state_with_warnings};
pub use error::{XmlError, XmlProblem};
pub use prefs::parse_global_prefs;
pub use state_files::{SourceText, StateFiles, load_state, load_state_with_warnings};
