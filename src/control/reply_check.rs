//! Whether a scheduler reply may be taken at all, before any of it is (docs/design.md
//! "Protocol facts", Files; issue "Talking to real project servers", code signing): a
//! reply offering a code-signing key other than the pinned one is refused whole unless
//! the pinned key signed the new one (its jobs may come with executables signed by the
//! new key), and so is a reply naming a file the client could not keep under its own
//! name in the project's directory, or open by its name in a slot directory. A refused reply counts as a failed RPC (seed 002's
//! backoff); nothing the client holds changes.

use crate::model::Project;
use crate::protocol::SchedulerReply;
use crate::protocol::code_signing::{CodeSignKey, KeyUpdate, Signature, check_key_update};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The longest file name a project may give, bytes (the usual file system limit).
pub const MAX_FILE_NAME: usize = 255;

/// Why a reply is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplyRefusal {
    /// The reply offers a new code-signing key the pinned key did not sign.
    KeyChange {
        /// What is wrong with the offer.
        reason: String,
    },
    /// The reply names a file that is not a plain name in the project's directory.
    UnsafeFileName {
        /// The name as sent.
        name: String,
    },
}

impl fmt::Display for ReplyRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplyRefusal::KeyChange { reason } => write!(
                f,
                "the reply changes the project's code-signing key: {reason}; the reply is \
                 refused and the pinned key kept (if the project really changed its key, \
                 reset the project)"
            ),
            ReplyRefusal::UnsafeFileName { name } => write!(
                f,
                "the reply names a file {name:?}, which is not a plain file name; the reply \
                 is refused: tell the project"
            ),
        }
    }
}

/// What taking the reply does to the project's code-signing key.
pub fn key_update(
    project: &Project,
    reply: &SchedulerReply,
) -> Result<Option<KeyUpdate>, ReplyRefusal> {
    let Some(offered) = reply.code_sign_key.as_deref().map(str::trim).filter(|k| !k.is_empty())
    else {
        return Ok(None);
    };
    let refused = |reason: String| ReplyRefusal::KeyChange { reason };
    let offered =
        CodeSignKey::parse(offered).map_err(|e| refused(format!("the key cannot be read: {e}")))?;
    let pinned = match project.code_sign_key.as_deref().map(str::trim).filter(|k| !k.is_empty()) {
        // A pinned key that cannot be read any more (a damaged state file) cannot vouch
        // for anything: the project must be reset.
        Some(text) => Some(CodeSignKey::parse(text).map_err(|e| {
            refused(format!("the pinned key cannot be read ({e}) to check the new one"))
        })?),
        None => None,
    };
    let signature = match reply.code_sign_key_signature.as_deref().map(str::trim) {
        Some(text) if !text.is_empty() => Some(
            Signature::parse(text)
                .map_err(|e| refused(format!("its signature cannot be read: {e}")))?,
        ),
        _ => None,
    };
    check_key_update(pinned.as_ref(), offered, signature.as_ref())
        .map(Some)
        .map_err(|e| refused(e.to_string()))
}

/// Whether `reply`, from `project`'s scheduler, may be taken.
pub fn check_reply(project: &Project, reply: &SchedulerReply) -> Result<(), ReplyRefusal> {
    if let Some(file) = reply.file_infos.iter().find(|f| !is_plain_file_name(&f.name)) {
        return Err(ReplyRefusal::UnsafeFileName { name: file.name.clone() });
    }
    // The names files are opened by in a slot (an empty one is the file's own name).
    let references = (reply.app_versions.iter().flat_map(|v| &v.file_refs))
        .chain(reply.workunits.iter().flat_map(|w| &w.file_refs))
        .chain(reply.results.iter().flat_map(|r| &r.file_refs));
    for reference in references {
        for name in [&reference.file_name, &reference.open_name] {
            if !name.is_empty() && !is_plain_file_name(name) {
                return Err(ReplyRefusal::UnsafeFileName { name: name.clone() });
            }
        }
    }
    key_update(project, reply).map(|_| ())
}

/// Whether `name` is a plain file name: one path component that stays in the directory
/// it is put in, printable, of a length file systems accept.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FILE_NAME
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_file_names() {
        for good in ["in_B", "upper_1.01_x86_64-pc-linux-gnu", ".hidden", "a b", "ü"] {
            assert!(is_plain_file_name(good), "{good}");
        }
        let long = "x".repeat(MAX_FILE_NAME + 1);
        for bad in ["", ".", "..", "../etc/passwd", "a/b", "a\\b", "a\nb", "a\0b", long.as_str()] {
            assert!(!is_plain_file_name(bad), "{bad:?}");
        }
    }

    use crate::protocol::code_signing::CodeSignKey;

    /// The test keys' public halves. The core cannot sign: key changes come with the
    /// signatures the project server's signer made of them (tests/fixtures/code_signing).
    fn public(name: &str) -> CodeSignKey {
        let text = match name {
            "a" => include_str!("../../tests/fixtures/code_signing/project_key_a_public.txt"),
            _ => include_str!("../../tests/fixtures/code_signing/project_key_b_public.txt"),
        };
        CodeSignKey::parse(text).expect("a test key")
    }

    /// A reply offering `key`, with the signature of it by key `signed_by`.
    fn offering(key: &str, signed_by: Option<&str>) -> SchedulerReply {
        let signature = signed_by.map(|by| match (key, by) {
            ("b", "a") => {
                include_str!("../../tests/fixtures/code_signing/key_b_signed_by_key_a.txt")
            }
            ("b", "b") => {
                include_str!("../../tests/fixtures/code_signing/key_b_signed_by_key_b.txt")
            }
            _ => panic!("no fixture of key {key} signed by key {by}"),
        });
        SchedulerReply {
            code_sign_key: Some(public(key).to_text()),
            code_sign_key_signature: signature.map(str::to_owned),
            ..SchedulerReply::default()
        }
    }

    #[test]
    fn a_new_key_is_taken_only_signed_by_the_pinned_one() {
        let mut state = crate::model::ClientState::default();
        state.projects.push(Project::new("p", "http://p/", 1.0));
        let project = crate::model::ProjectId(0);
        // The first key is pinned.
        let first = offering("a", None);
        assert!(check_reply(&state.projects[0], &first).is_ok());
        let outcome = crate::control::apply_reply(&mut state, project, first.clone(), 0.0);
        assert!(matches!(outcome.code_sign_key, crate::control::CodeSignKeyUpdate::Pinned(_)));
        // Key b unsigned, or signed by itself: refused, key a stays.
        for reply in [offering("b", None), offering("b", Some("b"))] {
            let refusal = check_reply(&state.projects[0], &reply).expect_err("refused");
            assert!(matches!(refusal, ReplyRefusal::KeyChange { .. }));
            assert!(refusal.to_string().contains("reset the project"), "{refusal}");
        }
        let pinned = state.projects[0].code_sign_key.clone();
        // Key b signed by key a: taken.
        let rollover = offering("b", Some("a"));
        assert!(check_reply(&state.projects[0], &rollover).is_ok());
        let outcome = crate::control::apply_reply(&mut state, project, rollover.clone(), 0.0);
        assert!(matches!(outcome.code_sign_key, crate::control::CodeSignKeyUpdate::Replaced(_)));
        assert_ne!(state.projects[0].code_sign_key, pinned);
        assert_eq!(
            state.projects[0].code_sign_key.as_deref().map(str::trim),
            Some(public("b").to_text().trim())
        );
        // Back to key a, signed by nobody: refused.
        assert!(check_reply(&state.projects[0], &offering("a", None)).is_err());
    }

    #[test]
    fn a_reply_naming_a_path_is_refused() {
        let project = Project::new("p", "http://p/", 1.0);
        let mut reply = SchedulerReply::default();
        reply.file_infos.push(crate::protocol::FileDescription {
            name: "../../bin/sh".into(),
            ..Default::default()
        });
        assert_eq!(
            check_reply(&project, &reply),
            Err(ReplyRefusal::UnsafeFileName { name: "../../bin/sh".into() })
        );
        assert!(check_reply(&project, &SchedulerReply::default()).is_ok());
    }

    #[test]
    fn a_reply_opening_a_file_by_a_path_is_refused() {
        use crate::protocol::{FileReference, ResultDescription, WorkunitDescription};
        let project = Project::new("p", "http://p/", 1.0);
        let reference = |open_name: &str| FileReference {
            file_name: "in_1".into(),
            open_name: open_name.into(),
            ..FileReference::default()
        };
        let mut by_workunit = SchedulerReply::default();
        by_workunit.workunits.push(WorkunitDescription {
            file_refs: vec![reference("in"), reference("../../../.bashrc")],
            ..WorkunitDescription::default()
        });
        assert_eq!(
            check_reply(&project, &by_workunit),
            Err(ReplyRefusal::UnsafeFileName { name: "../../../.bashrc".into() })
        );
        let mut by_result = SchedulerReply::default();
        by_result.results.push(ResultDescription {
            file_refs: vec![reference("/etc/cron.d/x")],
            ..ResultDescription::default()
        });
        assert!(check_reply(&project, &by_result).is_err());
        let mut plain = SchedulerReply::default();
        plain.results.push(ResultDescription {
            file_refs: vec![reference(""), reference("out")],
            ..ResultDescription::default()
        });
        assert_eq!(check_reply(&project, &plain), Ok(()));
    }
}
