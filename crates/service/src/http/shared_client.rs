//! The one reqwest client a live client's HTTP shares (docs/design.md "Protocol facts":
//! scheduler RPCs, transfers, master pages, notice feeds, web RPCs), replaced whole when
//! the user sets another proxy (`set_proxy_settings`): a request takes the client in
//! force when it starts, and one already under way ends on the client it started with.

use std::sync::{Arc, PoisonError, RwLock};

/// A client and the proxy it goes through (for messages; no credentials).
type InForce = (reqwest::Client, Option<String>);

/// A handle on the client in force; clones share it.
#[derive(Clone, Debug)]
pub struct SharedClient {
    current: Arc<RwLock<InForce>>,
}

impl SharedClient {
    /// `client`, going through the proxy `proxy` names (`None`: the environment's).
    pub fn new(client: reqwest::Client, proxy: Option<String>) -> Self {
        SharedClient { current: Arc::new(RwLock::new((client, proxy))) }
    }

    /// The client in force (reqwest clients are handles: cheap to clone).
    pub fn get(&self) -> reqwest::Client {
        self.in_force().0
    }

    /// The client in force and the proxy it goes through.
    pub fn in_force(&self) -> InForce {
        // A writer cannot panic half-way through a swap, so a poisoned lock still holds
        // a whole client.
        self.current.read().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// Puts `client` (through `proxy`) in force for every request from now on.
    pub fn replace(&self, client: reqwest::Client, proxy: Option<String>) {
        *self.current.write().unwrap_or_else(PoisonError::into_inner) = (client, proxy);
    }
}

impl From<reqwest::Client> for SharedClient {
    fn from(client: reqwest::Client) -> Self {
        SharedClient::new(client, None)
    }
}
