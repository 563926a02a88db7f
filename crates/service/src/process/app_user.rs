//! Running apps as a dedicated user (issue 16 item 4; docs/app-isolation.md "The app
//! user"): `boinc-rs run --app-user USER`, BOINC's `boinc_project` account. The client
//! looks the user up once, when it starts, and refuses to start when the user does not
//! exist, is root, or the client cannot switch to it; each app's process then takes the
//! user's supplementary groups, primary group and user id, in that order (the groups
//! need the privilege the user id change gives up), between fork and exec.

use nix::unistd::{Gid, Uid, User};
use std::ffi::CString;

/// The user apps run as, looked up when the client starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppUser {
    /// The user's name.
    pub name: String,
    /// Its user id.
    pub uid: u32,
    /// Its primary group: the group that owns `projects/` and `slots/`.
    pub gid: u32,
    /// Every group it is in (the primary group among them), as `setgroups` takes them.
    pub groups: Vec<u32>,
}

/// Why apps cannot run as the user asked for.
#[derive(Debug, thiserror::Error)]
pub enum AppUserError {
    /// No such user.
    #[error(
        "the app user {name} does not exist: create it (for example `useradd --system \
         --no-create-home {name}`) or name another user with --app-user"
    )]
    NoSuchUser {
        /// The name given.
        name: String,
    },
    /// The user database could not be read.
    #[error("cannot look up the app user {name}: {source}; check /etc/passwd and NSS")]
    Lookup {
        /// The name given.
        name: String,
        /// The system's error.
        #[source]
        source: nix::Error,
    },
    /// The user is root: nothing would be separated.
    #[error(
        "the app user {name} is root (uid 0), which would give apps every right: name an \
         unprivileged user"
    )]
    Root {
        /// The name given.
        name: String,
    },
    /// The client may not change its user and group ids.
    #[error(
        "this client (uid {client_uid}) cannot start apps as {name}: run it as root, or give \
         it CAP_SETUID, CAP_SETGID and CAP_KILL (and make its user a member of {name}'s \
         group), or run it without --app-user"
    )]
    CannotSwitch {
        /// The app user.
        name: String,
        /// The client's effective user id.
        client_uid: u32,
    },
}

/// Linux's capability numbers: signalling another user's processes (suspend, quit,
/// kill), changing group and user ids.
const CAP_KILL: u32 = 5;
const CAP_SETGID: u32 = 6;
const CAP_SETUID: u32 = 7;

impl AppUser {
    /// Looks `name` up (its ids and groups) and checks that this client can switch to it.
    pub fn look_up(name: &str) -> Result<AppUser, AppUserError> {
        let user = User::from_name(name)
            .map_err(|source| AppUserError::Lookup { name: name.to_owned(), source })?
            .ok_or_else(|| AppUserError::NoSuchUser { name: name.to_owned() })?;
        if user.uid.is_root() {
            return Err(AppUserError::Root { name: name.to_owned() });
        }
        let c_name =
            CString::new(name).map_err(|_| AppUserError::NoSuchUser { name: name.to_owned() })?;
        let groups = nix::unistd::getgrouplist(&c_name, user.gid)
            .map_err(|source| AppUserError::Lookup { name: name.to_owned(), source })?;
        let app_user = AppUser {
            name: name.to_owned(),
            uid: user.uid.as_raw(),
            gid: user.gid.as_raw(),
            groups: groups.into_iter().map(Gid::as_raw).collect(),
        };
        if !app_user.client_can_switch() {
            return Err(AppUserError::CannotSwitch {
                name: name.to_owned(),
                client_uid: Uid::effective().as_raw(),
            });
        }
        Ok(app_user)
    }

    /// Whether the client already runs as the user (nothing to switch).
    pub(crate) fn is_client(&self) -> bool {
        Uid::effective().as_raw() == self.uid && Gid::effective().as_raw() == self.gid
    }

    fn client_can_switch(&self) -> bool {
        if self.is_client() {
            return true;
        }
        match effective_capabilities() {
            Some(caps) => {
                [CAP_KILL, CAP_SETGID, CAP_SETUID].iter().all(|cap| caps & (1 << cap) != 0)
            }
            None => Uid::effective().is_root(),
        }
    }

    /// Becomes the user: supplementary groups, primary group, then user id. Called in
    /// the app's forked process before it executes: only system calls, no allocation.
    pub(crate) fn become_user(&self) -> std::io::Result<()> {
        if self.is_client() {
            return Ok(());
        }
        let check = |result: nix::libc::c_int| {
            if result == 0 { Ok(()) } else { Err(std::io::Error::last_os_error()) }
        };
        // SAFETY: plain system calls on values the client prepared before the fork.
        unsafe {
            check(nix::libc::setgroups(self.groups.len(), self.groups.as_ptr()))?;
            check(nix::libc::setgid(self.gid))?;
            check(nix::libc::setuid(self.uid))?;
        }
        // Giving up root must be for good: getting it back has to fail.
        if nix::unistd::setuid(Uid::from_raw(0)).is_ok() {
            return Err(std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        }
        Ok(())
    }
}

/// The process's effective capabilities (`CapEff` in /proc/self/status).
fn effective_capabilities() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let hex = status.lines().find_map(|line| line.strip_prefix("CapEff:"))?;
    u64::from_str_radix(hex.trim(), 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_user_is_refused_with_what_to_do() {
        let error = AppUser::look_up("boinc-rs-no-such-user-x").unwrap_err();
        assert!(matches!(error, AppUserError::NoSuchUser { .. }), "{error}");
        assert!(error.to_string().contains("useradd"), "{error}");
    }

    #[test]
    fn root_is_refused() {
        let error = AppUser::look_up("root").unwrap_err();
        assert!(matches!(error, AppUserError::Root { .. }), "{error}");
    }

    #[test]
    fn a_user_is_looked_up_with_its_groups_or_refused_for_want_of_privilege() {
        match AppUser::look_up("nobody") {
            Ok(user) => {
                assert!(user.uid != 0 && user.groups.contains(&user.gid), "{user:?}");
                assert!(effective_capabilities().is_some_and(|c| c & (1 << CAP_SETUID) != 0));
            }
            Err(AppUserError::CannotSwitch { client_uid, .. }) => {
                assert_ne!(client_uid, 0, "root can always switch");
            }
            Err(AppUserError::NoSuchUser { .. }) => {
                eprintln!("SKIPPED PART: this system has no user nobody");
            }
            Err(other) => panic!("{other}"),
        }
    }
}
