//! Faults on purpose, for tests of clients (issue "Talking to real project servers":
//! each fault a client must survive). A test posts rules to `POST /admin/faults`; each
//! rule makes the next `count` requests of its kind misbehave (`count` 0: every one
//! until the rules are cleared with `DELETE /admin/faults`). See README.md, "Faults on
//! purpose", for the list and the JSON.

use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Which requests a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultTarget {
    /// The master page (`GET /`).
    Master,
    /// Scheduler requests (`POST /cgi`).
    Scheduler,
    /// Downloads (`GET /download/NAME`).
    Download,
    /// Uploads and size queries (`POST /file_upload_handler`).
    Upload,
    /// All of these.
    Any,
}

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// HTTP 500 with a short text body.
    #[serde(rename = "http_500")]
    Http500,
    /// HTTP 200 with a body that is not XML.
    NotXml,
    /// No answer for `seconds` (default an hour), then HTTP 503: the client times out.
    Hang {
        /// How long to hold the request.
        #[serde(default)]
        seconds: Option<f64>,
    },
    /// The connection is reset (TCP RST) instead of answered.
    Reset,
    /// The answer's length is announced in full but only its first half is sent, then
    /// the connection is closed.
    Truncated,
    /// An answer of `bytes` bytes (default 100 MB): for the scheduler, a reply padded
    /// with one enormous message; for a download, that many bytes instead of the file.
    Huge {
        /// Its size.
        #[serde(default)]
        bytes: Option<u64>,
    },
    /// The answer trickles at `bytes_per_second`.
    Slow {
        /// The rate.
        bytes_per_second: u64,
    },
    /// A download with one byte changed: its MD5 is wrong, its size right.
    WrongMd5,
    /// A download with bytes added: its size (and MD5) are wrong.
    WrongSize,
    /// The reply's executables carry a signature with one digit changed.
    BadSignature,
    /// The reply's executables carry no signature.
    MissingSignature,
}

/// The default size of [`Fault::Huge`].
pub const HUGE_DEFAULT_BYTES: u64 = 100_000_000;

/// The default hold of [`Fault::Hang`], seconds.
pub const HANG_DEFAULT_SECONDS: f64 = 3600.0;

/// One rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FaultRule {
    /// Which requests.
    pub target: FaultTarget,
    /// What goes wrong.
    #[serde(flatten)]
    pub fault: Fault,
    /// How many requests (0: all until cleared).
    #[serde(default = "one")]
    pub count: u32,
    /// Downloads and uploads: only those of this file.
    #[serde(default)]
    pub file: Option<String>,
}

fn one() -> u32 {
    1
}

/// The rules in force, and the faults applied so far.
#[derive(Debug, Default)]
pub(crate) struct FaultPlan {
    rules: Mutex<Vec<FaultRule>>,
    applied: Mutex<Vec<(FaultTarget, Fault)>>,
}

impl FaultPlan {
    fn rules(&self) -> std::sync::MutexGuard<'_, Vec<FaultRule>> {
        self.rules.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds rules after those in force.
    pub(crate) fn add(&self, rules: Vec<FaultRule>) {
        self.rules().extend(rules);
    }

    /// Removes every rule.
    pub(crate) fn clear(&self) {
        self.rules().clear();
    }

    /// The rules in force.
    pub(crate) fn list(&self) -> Vec<FaultRule> {
        self.rules().clone()
    }

    /// Faults applied so far, oldest first.
    pub(crate) fn applied(&self) -> Vec<(FaultTarget, Fault)> {
        self.applied.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The fault for a request to `target` (of `file`, for transfers), if a rule says
    /// so; a rule whose count is used up is removed. Only faults `accepts` takes are
    /// considered (a scheduler request looks for its content faults separately).
    pub(crate) fn take(
        &self,
        target: FaultTarget,
        file: Option<&str>,
        accepts: impl Fn(&Fault) -> bool,
    ) -> Option<Fault> {
        let mut rules = self.rules();
        let at = rules.iter().position(|rule| {
            (rule.target == target || rule.target == FaultTarget::Any)
                && rule.file.as_deref().is_none_or(|f| Some(f) == file)
                && accepts(&rule.fault)
        })?;
        let fault = rules[at].fault;
        match rules[at].count {
            0 => {}
            1 => {
                rules.remove(at);
            }
            _ => rules[at].count -= 1,
        }
        drop(rules);
        tracing::warn!(?target, ?fault, file, "fault injected on purpose");
        self.applied
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((target, fault));
        Some(fault)
    }
}

impl Fault {
    /// Its name, as `/admin/faults` spells it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Fault::Http500 => "http_500",
            Fault::NotXml => "not_xml",
            Fault::Hang { .. } => "hang",
            Fault::Reset => "reset",
            Fault::Truncated => "truncated",
            Fault::Huge { .. } => "huge",
            Fault::Slow { .. } => "slow",
            Fault::WrongMd5 => "wrong_md5",
            Fault::WrongSize => "wrong_size",
            Fault::BadSignature => "bad_signature",
            Fault::MissingSignature => "missing_signature",
        }
    }

    /// A fault in the scheduler reply's content rather than its transport.
    pub(crate) fn is_reply_content(&self) -> bool {
        matches!(self, Fault::BadSignature | Fault::MissingSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_read_from_json_and_count_down() {
        let rules: Vec<FaultRule> = serde_json::from_str(
            r#"[{"target": "scheduler", "fault": "http_500", "count": 2},
                {"target": "download", "fault": "wrong_md5", "file": "a"},
                {"target": "any", "fault": "hang", "seconds": 5, "count": 0}]"#,
        )
        .expect("reads");
        assert_eq!(rules[2].fault, Fault::Hang { seconds: Some(5.0) });
        let plan = FaultPlan::default();
        plan.add(rules);
        let all = |_: &Fault| true;
        assert_eq!(plan.take(FaultTarget::Scheduler, None, all), Some(Fault::Http500));
        assert_eq!(plan.take(FaultTarget::Scheduler, None, all), Some(Fault::Http500));
        assert_eq!(
            plan.take(FaultTarget::Download, Some("b"), |f| *f
                != Fault::Hang { seconds: Some(5.0) }),
            None
        );
        assert_eq!(plan.take(FaultTarget::Download, Some("a"), all), Some(Fault::WrongMd5));
        for _ in 0..3 {
            assert_eq!(
                plan.take(FaultTarget::Master, None, all),
                Some(Fault::Hang { seconds: Some(5.0) })
            );
        }
        assert_eq!(plan.applied().len(), 6);
        plan.clear();
        assert_eq!(plan.take(FaultTarget::Master, None, all), None);
    }

    #[test]
    fn a_fault_is_named_as_its_json_spells_it() {
        for fault in [
            Fault::Http500,
            Fault::NotXml,
            Fault::Hang { seconds: None },
            Fault::Reset,
            Fault::Truncated,
            Fault::Huge { bytes: Some(1) },
            Fault::Slow { bytes_per_second: 1 },
            Fault::WrongMd5,
            Fault::WrongSize,
            Fault::BadSignature,
            Fault::MissingSignature,
        ] {
            let json = serde_json::to_value(fault).expect("writes");
            assert_eq!(json["fault"], fault.name(), "{fault:?}");
        }
    }
}
