//! What a client does about an account manager's reply, as BOINC's client does it: an
//! error changes nothing; otherwise every account whose URL signature checks out with
//! the manager's key (the same key as before, once there was one) is acted on: a
//! project the host lacks is attached (with the manager's share), one it has is
//! detached, updated, suspended or resumed, given a share or told to stop (or start
//! again) fetching work, as the account says; an account under another authenticator
//! than the host's is left alone. The next request is due after `<repeat_sec>` (a day
//! when the manager does not say).

use super::reply::AccountManagerReply;
use crate::Time;
use crate::control::UserAction;
use crate::model::ClientState;

/// How long until the next request when the manager does not say (BOINC's day).
pub const DEFAULT_REPEAT_SECONDS: f64 = 86_400.0;

/// One thing the client does about a reply.
#[derive(Debug, Clone, PartialEq)]
pub enum AccountManagerAction {
    /// Attach a project the client does not have: the host service writes its account
    /// file; the project is marked as attached through the manager.
    Attach {
        /// Master URL.
        master_url: String,
        /// The account's authenticator.
        authenticator: String,
        /// Start with "no new tasks" set or cleared.
        dont_request_more_work: Option<bool>,
    },
    /// A change the client makes to a project it has.
    User(UserAction),
    /// The project's resource share on this host, as the manager sets it.
    SetResourceShare {
        /// Master URL.
        master_url: String,
        /// The share.
        share: f64,
    },
    /// The project is attached through the manager (it may detach it).
    MarkAttachedViaManager {
        /// Master URL.
        master_url: String,
    },
}

/// Why an account of a reply was not acted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// Its URL signature does not check out with the manager's key.
    BadSignature,
    /// The host is attached to the project under another account.
    OtherAccount,
}

/// What to do about a reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AccountManagerPlan {
    /// The actions, in the reply's order.
    pub actions: Vec<AccountManagerAction>,
    /// Accounts not acted on, with the reason.
    pub rejected: Vec<(String, Rejection)>,
    /// When the next request is due.
    pub next_rpc_time: Time,
    /// The manager's error, when the request failed (then nothing else is done).
    pub error: Option<String>,
    /// The manager's signing key to keep (the first one it sent).
    pub signing_key: Option<String>,
    /// Messages for the user's event log.
    pub messages: Vec<String>,
}

/// The plan for `reply` received at `now` by a client in `state`. `known_key` is the
/// signing key kept from earlier replies; `verify(url, signature, key)` checks a URL
/// signature; `authenticator(url)` is the host's authenticator for a project it has.
pub fn plan_reply(
    reply: &AccountManagerReply,
    state: &ClientState,
    known_key: Option<&str>,
    verify: impl Fn(&str, &str, &str) -> bool,
    authenticator: impl Fn(&str) -> Option<String>,
    now: Time,
) -> AccountManagerPlan {
    let mut plan = AccountManagerPlan {
        next_rpc_time: now + DEFAULT_REPEAT_SECONDS,
        messages: reply.messages.clone(),
        ..AccountManagerPlan::default()
    };
    if reply.error_num != 0 || reply.error.is_some() {
        plan.error =
            Some(reply.error.clone().unwrap_or_else(|| format!("error {}", reply.error_num)));
        return plan;
    }
    if let Some(repeat) = reply.repeat_sec.filter(|r| r.is_finite() && *r > 0.0) {
        plan.next_rpc_time = now + repeat;
    }
    let key = match (known_key, reply.signing_key.as_deref()) {
        (_, None) => {
            plan.error = Some("the account manager sent no signing key".into());
            return plan;
        }
        (Some(known), Some(sent)) if known.trim() != sent.trim() => {
            plan.error = Some("the account manager's signing key changed; nothing was done".into());
            return plan;
        }
        (_, Some(sent)) => sent,
    };
    if known_key.is_none() {
        plan.signing_key = Some(key.to_string());
    }
    for account in &reply.accounts {
        let url = &account.url;
        if !verify(url, &account.url_signature, key) {
            plan.rejected.push((url.clone(), Rejection::BadSignature));
            continue;
        }
        let attached = state.project_by_url(url).filter(|&p| !state.project(p).detached);
        let Some(_) = attached else {
            if !account.detach {
                plan.actions.push(AccountManagerAction::Attach {
                    master_url: url.clone(),
                    authenticator: account.authenticator.clone(),
                    dont_request_more_work: account.dont_request_more_work,
                });
                // The manager's share holds from the start, not from its next reply.
                if let Some(share) = account.resource_share {
                    plan.actions.push(AccountManagerAction::SetResourceShare {
                        master_url: url.clone(),
                        share,
                    });
                }
            }
            continue;
        };
        if account.detach {
            plan.actions.push(AccountManagerAction::User(UserAction::Detach(url.clone())));
            continue;
        }
        if !account.authenticator.is_empty()
            && authenticator(url).is_some_and(|ours| ours != account.authenticator)
        {
            plan.rejected.push((url.clone(), Rejection::OtherAccount));
            continue;
        }
        plan.actions.push(AccountManagerAction::MarkAttachedViaManager { master_url: url.clone() });
        let stop_fetching = match (account.dont_request_more_work, account.detach_when_done) {
            // Detaching when done means fetching nothing new meanwhile.
            (_, Some(true)) => Some(true),
            (setting, _) => setting,
        };
        match stop_fetching {
            Some(true) => {
                plan.actions.push(AccountManagerAction::User(UserAction::NoMoreWork(url.clone())))
            }
            Some(false) => plan
                .actions
                .push(AccountManagerAction::User(UserAction::AllowMoreWork(url.clone()))),
            None => {}
        }
        match account.suspend {
            Some(true) => plan
                .actions
                .push(AccountManagerAction::User(UserAction::SuspendProject(url.clone()))),
            Some(false) => plan
                .actions
                .push(AccountManagerAction::User(UserAction::ResumeProject(url.clone()))),
            None => {}
        }
        if let Some(share) = account.resource_share {
            plan.actions
                .push(AccountManagerAction::SetResourceShare { master_url: url.clone(), share });
        }
        if account.update {
            plan.actions.push(AccountManagerAction::User(UserAction::UpdateProject(url.clone())));
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::super::reply::{AccountManagerAccount, AccountManagerReply};
    use super::*;
    use crate::model::Project;

    const KEY: &str = "1024\nabcdef\n.";

    fn state() -> ClientState {
        let mut state = ClientState::default();
        state.projects.push(Project::new("Einstein", "http://einstein/", 100.0));
        state.projects.push(Project::new("Rosetta", "http://rosetta/", 100.0));
        let mut old = Project::new("Old", "http://old/", 100.0);
        old.detached = true;
        state.projects.push(old);
        state
    }

    /// Signatures are "signed:URL" in these tests.
    fn verify(url: &str, signature: &str, key: &str) -> bool {
        key == KEY && signature == format!("signed:{url}")
    }

    fn account(url: &str) -> AccountManagerAccount {
        AccountManagerAccount {
            url: url.into(),
            url_signature: format!("signed:{url}"),
            ..AccountManagerAccount::default()
        }
    }

    fn reply(accounts: Vec<AccountManagerAccount>) -> AccountManagerReply {
        AccountManagerReply {
            name: "AM".into(),
            signing_key: Some(KEY.into()),
            repeat_sec: Some(3600.0),
            accounts,
            ..AccountManagerReply::default()
        }
    }

    fn ours(_: &str) -> Option<String> {
        Some("mine".into())
    }

    #[test]
    fn attaches_detaches_and_changes_as_the_manager_says() {
        let mut einstein = account("http://einstein/");
        einstein.update = true;
        einstein.resource_share = Some(25.0);
        einstein.dont_request_more_work = Some(true);
        let mut rosetta = account("http://rosetta/");
        rosetta.detach = true;
        let mut new = account("http://new/");
        new.authenticator = "key-new".into();
        // A project the host detached from is attached again.
        let old = account("http://old/");
        let plan = plan_reply(
            &reply(vec![einstein, rosetta, new, old]),
            &state(),
            None,
            verify,
            ours,
            1000.0,
        );
        assert_eq!(plan.error, None);
        assert_eq!(plan.next_rpc_time, 4600.0);
        assert_eq!(plan.signing_key.as_deref(), Some(KEY));
        let url = |u: &str| u.to_string();
        assert_eq!(
            plan.actions,
            vec![
                AccountManagerAction::MarkAttachedViaManager {
                    master_url: url("http://einstein/")
                },
                AccountManagerAction::User(UserAction::NoMoreWork(url("http://einstein/"))),
                AccountManagerAction::SetResourceShare {
                    master_url: url("http://einstein/"),
                    share: 25.0
                },
                AccountManagerAction::User(UserAction::UpdateProject(url("http://einstein/"))),
                AccountManagerAction::User(UserAction::Detach(url("http://rosetta/"))),
                AccountManagerAction::Attach {
                    master_url: url("http://new/"),
                    authenticator: "key-new".into(),
                    dont_request_more_work: None
                },
                AccountManagerAction::Attach {
                    master_url: url("http://old/"),
                    authenticator: String::new(),
                    dont_request_more_work: None
                },
            ]
        );
    }

    #[test]
    fn bad_signatures_and_other_accounts_are_left_alone() {
        let mut forged = account("http://evil/");
        forged.url_signature = "signed:http://elsewhere/".into();
        let mut other = account("http://einstein/");
        other.authenticator = "theirs".into();
        let plan = plan_reply(&reply(vec![forged, other]), &state(), Some(KEY), verify, ours, 0.0);
        assert!(plan.actions.is_empty());
        assert_eq!(
            plan.rejected,
            vec![
                ("http://evil/".to_string(), Rejection::BadSignature),
                ("http://einstein/".to_string(), Rejection::OtherAccount)
            ]
        );
        assert_eq!(plan.signing_key, None, "the known key is kept");
    }

    #[test]
    fn errors_and_key_changes_change_nothing() {
        let mut failed = reply(vec![account("http://new/")]);
        failed.error_num = -206;
        failed.error = Some("bad password".into());
        let plan = plan_reply(&failed, &state(), None, verify, ours, 10.0);
        assert_eq!(plan.error.as_deref(), Some("bad password"));
        assert!(plan.actions.is_empty());
        assert_eq!(plan.next_rpc_time, 10.0 + DEFAULT_REPEAT_SECONDS);

        let changed = plan_reply(
            &reply(vec![account("http://new/")]),
            &state(),
            Some("other key"),
            verify,
            ours,
            0.0,
        );
        assert!(changed.error.is_some() && changed.actions.is_empty());

        let mut keyless = reply(vec![account("http://new/")]);
        keyless.signing_key = None;
        assert!(plan_reply(&keyless, &state(), None, verify, ours, 0.0).error.is_some());

        let mut unsaid = reply(Vec::new());
        unsaid.repeat_sec = None;
        assert_eq!(
            plan_reply(&unsaid, &state(), None, verify, ours, 5.0).next_rpc_time,
            5.0 + DEFAULT_REPEAT_SECONDS
        );
    }

    #[test]
    fn detach_when_done_stops_fetching_and_suspend_follows_the_manager() {
        let mut einstein = account("http://einstein/");
        einstein.detach_when_done = Some(true);
        einstein.dont_request_more_work = Some(false);
        einstein.suspend = Some(true);
        let plan = plan_reply(&reply(vec![einstein]), &state(), None, verify, ours, 0.0);
        assert!(plan.actions.contains(&AccountManagerAction::User(UserAction::NoMoreWork(
            "http://einstein/".into()
        ))));
        assert!(plan.actions.contains(&AccountManagerAction::User(UserAction::SuspendProject(
            "http://einstein/".into()
        ))));
    }
}
