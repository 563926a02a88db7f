//! Dashboard sessions (docs/dashboard.md "Login"): logging in with the GUI RPC password
//! opens a session named by a random id, carried in an HttpOnly, SameSite=Strict cookie
//! that scripts cannot read and other sites cannot send; each session has its own
//! random CSRF token, which the page holds and every action must send back in a header.
//! Sessions end when idle for a day; there are at most [`MAX_SESSIONS`], the idlest
//! closed first, so no number of logins grows memory.

use rand::RngCore;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The session cookie's name.
pub(crate) const COOKIE: &str = "boinc_rs_session";
/// The header every action carries the CSRF token in.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// The most sessions open at once.
pub(crate) const MAX_SESSIONS: usize = 64;
/// How long an unused session lasts.
pub(crate) const IDLE_LIMIT: Duration = Duration::from_secs(24 * 3600);

struct Session {
    csrf: String,
    last_used: Instant,
}

/// The open sessions.
#[derive(Default)]
pub(crate) struct Sessions(Mutex<HashMap<String, Session>>);

/// 32 random bytes in hex: a session id or a CSRF token nobody can guess.
fn token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Sessions {
    fn locked(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a session: its id and CSRF token.
    pub(crate) fn open(&self, now: Instant) -> (String, String) {
        let mut sessions = self.locked();
        sessions.retain(|_, s| now.saturating_duration_since(s.last_used) < IDLE_LIMIT);
        while sessions.len() >= MAX_SESSIONS {
            let idlest = sessions.iter().min_by_key(|(_, s)| s.last_used).map(|(id, _)| id.clone());
            match idlest {
                Some(id) => sessions.remove(&id),
                None => break,
            };
        }
        let (id, csrf) = (token(), token());
        sessions.insert(id.clone(), Session { csrf: csrf.clone(), last_used: now });
        (id, csrf)
    }

    /// The CSRF token of the session `id`, when it is open; it counts as used.
    pub(crate) fn csrf_of(&self, id: &str, now: Instant) -> Option<String> {
        let mut sessions = self.locked();
        let session = sessions.get_mut(id)?;
        if now.saturating_duration_since(session.last_used) >= IDLE_LIMIT {
            sessions.remove(id);
            return None;
        }
        session.last_used = now;
        Some(session.csrf.clone())
    }

    /// Ends the session `id`.
    pub(crate) fn close(&self, id: &str) {
        self.locked().remove(id);
    }
}

/// Whether two secrets are equal, taking as long whichever byte differs (a password or
/// token guessed byte by byte from response times learns nothing).
pub(crate) fn same_secret(given: &str, expected: &str) -> bool {
    let (given, expected) = (given.as_bytes(), expected.as_bytes());
    given.len() == expected.len()
        && given.iter().zip(expected).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_has_its_own_token_and_ends_when_closed() {
        let sessions = Sessions::default();
        let now = Instant::now();
        let (id, csrf) = sessions.open(now);
        let (other, other_csrf) = sessions.open(now);
        assert_ne!(id, other);
        assert_ne!(csrf, other_csrf);
        assert_eq!(id.len(), 64);
        assert_eq!(sessions.csrf_of(&id, now).as_deref(), Some(csrf.as_str()));
        assert_eq!(sessions.csrf_of("not-a-session", now), None);
        sessions.close(&id);
        assert_eq!(sessions.csrf_of(&id, now), None);
        assert!(sessions.csrf_of(&other, now).is_some());
    }

    #[test]
    fn an_idle_session_expires() {
        let sessions = Sessions::default();
        let now = Instant::now();
        let (id, _) = sessions.open(now);
        assert!(sessions.csrf_of(&id, now + IDLE_LIMIT / 2).is_some());
        // Used at half the limit: it lasts a whole limit from then.
        assert!(sessions.csrf_of(&id, now + IDLE_LIMIT).is_some());
        assert_eq!(sessions.csrf_of(&id, now + IDLE_LIMIT * 3), None);
    }

    #[test]
    fn logins_past_the_limit_close_the_idlest_sessions() {
        let sessions = Sessions::default();
        let start = Instant::now();
        let first = sessions.open(start).0;
        let ids: Vec<String> = (1..=MAX_SESSIONS as u64)
            .map(|i| sessions.open(start + Duration::from_secs(i)).0)
            .collect();
        assert_eq!(sessions.locked().len(), MAX_SESSIONS);
        assert_eq!(sessions.csrf_of(&first, start + Duration::from_secs(100)), None);
        assert!(sessions.csrf_of(&ids[ids.len() - 1], start + Duration::from_secs(100)).is_some());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret("hunter2", "hunter2"));
        assert!(!same_secret("hunter", "hunter2"));
        assert!(!same_secret("hunter3", "hunter2"));
        assert!(!same_secret("", "hunter2"));
        assert!(same_secret("", ""));
    }
}
