//! Projects attached through account files (docs/design.md "State"; BOINC's data directory
//! keeps each project's authenticator in `account_<url>.xml`, not in client_state.xml):
//! the accounts a data directory holds, taken into the state. A new account attaches a
//! new project, which fetches its master page and asks for work at the next
//! opportunity; an account for a detached project attaches it again; a changed
//! authenticator replaces the old one. Taking the same accounts again changes nothing,
//! so a running client can look at the directory as often as it likes.

use crate::model::{ClientState, Project, ProjectId};
use crate::protocol::Account;

/// BOINC's resource share for a newly attached project.
const NEW_PROJECT_SHARE: f64 = 100.0;

/// What taking the accounts into the state changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AccountChanges {
    /// Projects attached for the first time.
    pub attached: Vec<ProjectId>,
    /// Projects attached again after a detach, or whose authenticator changed.
    pub updated: Vec<ProjectId>,
}

impl AccountChanges {
    /// Whether anything changed.
    pub fn is_empty(&self) -> bool {
        self.attached.is_empty() && self.updated.is_empty()
    }
}

/// Takes the accounts into `state` (see the module documentation). Accounts with an
/// empty master URL or authenticator carry nothing to attach with and are skipped.
pub fn apply_accounts(state: &mut ClientState, accounts: &[Account]) -> AccountChanges {
    let mut changes = AccountChanges::default();
    for account in accounts {
        if account.master_url.is_empty() || account.authenticator.is_empty() {
            continue;
        }
        match state.project_by_url(&account.master_url) {
            Some(id) => {
                let project = &mut state.projects[id.index()];
                let reattached = project.detached;
                let new_key = project.authenticator != account.authenticator;
                if !(reattached || new_key) {
                    continue;
                }
                // A state imported from the real client has no authenticator (it lives in
                // the account file): filling it in is no reason for an RPC.
                let replaced = new_key && !project.authenticator.is_empty();
                account.authenticator.clone_into(&mut project.authenticator);
                if reattached {
                    project.detached = false;
                    project.suspended = false;
                    project.dont_request_more_work = false;
                }
                project.sched_rpc_pending |= reattached || replaced;
                changes.updated.push(id);
            }
            None => {
                let name = account.project_name.clone().unwrap_or_default();
                let mut project = Project::new(name, account.master_url.clone(), NEW_PROJECT_SHARE);
                if project.name.is_empty() {
                    project.name.clone_from(&project.master_url);
                }
                project.authenticator.clone_from(&account.authenticator);
                project.master_fetch_pending = true;
                project.sched_rpc_pending = true;
                changes.attached.push(ProjectId::from_index(state.projects.len()));
                state.projects.push(project);
            }
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(url: &str, key: &str) -> Account {
        Account {
            master_url: url.into(),
            authenticator: key.into(),
            project_name: None,
            project_preferences: None,
        }
    }

    #[test]
    fn new_accounts_attach_once() {
        let mut state = ClientState::default();
        let accounts = [account("http://a/", "k1"), account("http://b/", ""), account("", "k")];
        let changes = apply_accounts(&mut state, &accounts);
        assert_eq!(changes.attached, [ProjectId(0)]);
        let project = &state.projects[0];
        assert_eq!((project.name.as_str(), project.authenticator.as_str()), ("http://a/", "k1"));
        assert!(project.master_fetch_pending && project.sched_rpc_pending);
        assert!(apply_accounts(&mut state, &accounts).is_empty(), "idempotent");
        assert_eq!(state.projects.len(), 1);
    }

    #[test]
    fn imported_state_gets_its_authenticator_and_detached_projects_come_back() {
        let mut state = ClientState::default();
        let mut project = Project::new("P", "http://a/", 50.0);
        project.detached = true;
        project.suspended = true;
        project.dont_request_more_work = true;
        state.projects.push(project);
        let changes = apply_accounts(&mut state, &[account("http://a/", "key")]);
        assert_eq!(changes.updated, [ProjectId(0)]);
        let project = &state.projects[0];
        assert_eq!(project.authenticator, "key");
        assert!(!project.detached && !project.suspended && !project.dont_request_more_work);
        assert!(project.sched_rpc_pending);
        assert_eq!((project.name.as_str(), project.resource_share), ("P", 50.0));
    }

    #[test]
    fn a_missing_authenticator_is_filled_in_without_an_rpc() {
        let mut state = ClientState::default();
        state.projects.push(Project::new("P", "http://a/", 100.0));
        let changes = apply_accounts(&mut state, &[account("http://a/", "key")]);
        assert_eq!(changes.updated, [ProjectId(0)]);
        assert_eq!(state.projects[0].authenticator, "key");
        assert!(!state.projects[0].sched_rpc_pending);
        let changes = apply_accounts(&mut state, &[account("http://a/", "other")]);
        assert_eq!(changes.updated, [ProjectId(0)]);
        assert!(state.projects[0].sched_rpc_pending, "a new account asks the project");
    }
}
