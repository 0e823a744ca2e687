//! The HTTP clients, made on first use and shared by every tool with the same redirect
//! rules.
//!
//! Making a client reads the system's trust store (about 150 files on Debian), which took
//! most of the server's start-up when every HTTP tool made its own at load. Now the first
//! call pays it once, and tools calling the same API share one connection pool.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// What a client may do when the server redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RedirectRules {
    pub max_redirects: u8,
    /// Follow a redirect to another scheme, host or port.
    pub allow_other_hosts: bool,
    /// The tool's headers carry secrets: never resend them to another host, whatever
    /// `allow_other_hosts` says (the client drops only `Authorization` and `Cookie` itself).
    pub secret_headers: bool,
}

/// A tool's client: its rules, and the shared client once the first call asked for it.
#[derive(Debug, Clone)]
pub struct LazyClient {
    rules: RedirectRules,
    client: OnceLock<reqwest::Client>,
}

impl LazyClient {
    pub fn new(rules: RedirectRules) -> Self {
        Self {
            rules,
            client: OnceLock::new(),
        }
    }

    /// The client, made (or taken from the shared ones) on the first call.
    pub fn get(&self) -> Result<&reqwest::Client, String> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let client = shared(self.rules)?;
        Ok(self.client.get_or_init(|| client))
    }
}

/// The one client per rule set in this process.
fn shared(rules: RedirectRules) -> Result<reqwest::Client, String> {
    static CLIENTS: OnceLock<Mutex<HashMap<RedirectRules, reqwest::Client>>> = OnceLock::new();
    let clients = CLIENTS.get_or_init(Mutex::default);
    let mut clients = clients
        .lock()
        .map_err(|_| "the HTTP client cache is poisoned".to_owned())?;
    if let Some(client) = clients.get(&rules) {
        return Ok(client.clone());
    }
    let client = make(rules).map_err(|error| format!("cannot make an HTTP client: {error}"))?;
    clients.insert(rules, client.clone());
    Ok(client)
}

fn make(rules: RedirectRules) -> reqwest::Result<reqwest::Client> {
    // rustls with the ring provider (no OpenSSL, no C toolchain beyond what ring needs);
    // installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let RedirectRules {
        max_redirects,
        allow_other_hosts,
        secret_headers,
    } = rules;
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let first = attempt.previous().first();
        let same_origin = first.is_some_and(|first| {
            first.scheme() == attempt.url().scheme()
                && first.host_str() == attempt.url().host_str()
                && first.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if attempt.previous().len() > usize::from(max_redirects) {
            attempt.error(format!("more than {max_redirects} redirects"))
        } else if !same_origin && !allow_other_hosts {
            let target = attempt.url().host_str().unwrap_or_default().to_owned();
            attempt.error(format!(
                "a redirect to another host (`{target}`) was refused"
            ))
        } else if !same_origin && secret_headers {
            let target = attempt.url().host_str().unwrap_or_default().to_owned();
            attempt.error(format!(
                "a redirect to another host (`{target}`) was refused: the request's headers carry secrets"
            ))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        .user_agent(concat!("mcp-serve/", env!("CARGO_PKG_VERSION")))
        .tcp_nodelay(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_is_made_on_the_first_call_and_kept() {
        let client = LazyClient::new(RedirectRules {
            max_redirects: 3,
            allow_other_hosts: false,
            secret_headers: false,
        });
        assert!(client.client.get().is_none(), "made before the first call");
        let first: *const reqwest::Client = client.get().expect("client");
        let again: *const reqwest::Client = client.get().expect("client");
        assert!(std::ptr::eq(first, again), "made twice");
    }
}
