//! The process-control channel's requests (docs/design.md "Protocol facts", App API): the
//! client asks an app that uses BOINC's API to suspend, resume, quit (it restarts later
//! from its checkpoint) or abort (its job ends in an error). Apps without the API get
//! signals instead.

use super::error::AppMessageError;
use super::fragment::parse_fragment;

/// A request on the process-control channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessControl {
    /// Stop computing; stay in memory.
    Suspend,
    /// Compute again.
    Resume,
    /// Exit now (after a checkpoint if one is due); the client restarts the app later.
    Quit,
    /// Exit now; the job is over.
    Abort,
    /// Read `init_data.xml` again.
    RereadAppInfo,
    /// The network is available again.
    NetworkAvailable,
}

impl ProcessControl {
    /// The message text.
    pub fn to_message(self) -> &'static str {
        match self {
            ProcessControl::Suspend => "<suspend/>",
            ProcessControl::Resume => "<resume/>",
            ProcessControl::Quit => "<quit/>",
            ProcessControl::Abort => "<abort/>",
            ProcessControl::RereadAppInfo => "<reread_app_info/>",
            ProcessControl::NetworkAvailable => "<network_available/>",
        }
    }

    /// The requests in a message (a message may carry several; unknown elements are
    /// skipped), in the order they appear.
    pub fn parse(text: &str) -> Result<Vec<ProcessControl>, AppMessageError> {
        let message = parse_fragment(text)?;
        Ok(message
            .children
            .iter()
            .filter_map(|child| match child.name.as_str() {
                "suspend" => Some(ProcessControl::Suspend),
                "resume" => Some(ProcessControl::Resume),
                "quit" => Some(ProcessControl::Quit),
                "abort" => Some(ProcessControl::Abort),
                "reread_app_info" => Some(ProcessControl::RereadAppInfo),
                "network_available" => Some(ProcessControl::NetworkAvailable),
                _ => None,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_round_trips() {
        for request in [
            ProcessControl::Suspend,
            ProcessControl::Resume,
            ProcessControl::Quit,
            ProcessControl::Abort,
            ProcessControl::RereadAppInfo,
            ProcessControl::NetworkAvailable,
        ] {
            assert_eq!(ProcessControl::parse(request.to_message()), Ok(vec![request]));
        }
    }

    #[test]
    fn several_requests_and_unknown_ones() {
        assert_eq!(
            ProcessControl::parse("<suspend/>\n<x>1</x><quit/>"),
            Ok(vec![ProcessControl::Suspend, ProcessControl::Quit])
        );
        assert!(ProcessControl::parse("<suspend>").is_err());
    }
}
