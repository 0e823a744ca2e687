//! The HTTP clients, made on first use and shared by every tool with the same redirect
//! rules. One [`HttpClients`] per server, passed to each call in its context.
//!
//! Making a client reads the system's trust store (about 150 files on Debian), which took
//! most of the server's start-up when every HTTP tool made its own at load. Now the first
//! call pays it once, and tools calling the same API share one connection pool.

use std::collections::HashMap;
use std::sync::Mutex;

/// Why no client could send a call's request. Not the call's fault: the server's.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("cannot send {0} to the stand-in upstream")]
    StandIn(String),
    #[error("the HTTP client cache is poisoned")]
    Poisoned,
    /// reqwest's own text is only "builder error": the deepest cause says what to fix.
    #[error("cannot make an HTTP client: {}", deepest(.0))]
    Make(#[source] reqwest::Error),
}

fn deepest(error: &reqwest::Error) -> &dyn std::error::Error {
    let mut cause: &dyn std::error::Error = error;
    while let Some(deeper) = cause.source() {
        cause = deeper;
    }
    cause
}

/// What a client may do when the server redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RedirectRules {
    pub max_redirects: u8,
    /// Follow a redirect to another scheme, host or port.
    pub allow_other_hosts: bool,
    /// The tool's request carries secrets (in its URL, query, headers or body): never follow
    /// a redirect to another origin, whatever `allow_other_hosts` says. The client drops only
    /// `Authorization` and `Cookie` itself, and a 307/308 would resend the body.
    pub carries_secrets: bool,
}

/// The HTTP clients of one server, one per rule set, made on first use and shared by every
/// tool with the same rules (and kept across reloads, with their connection pools).
#[derive(Debug, Default)]
pub struct HttpClients {
    clients: Mutex<HashMap<RedirectRules, reqwest::Client>>,
    /// `mcp-serve test`: every request goes to this stand-in instead, path and query kept.
    stand_in: Option<std::net::SocketAddr>,
}

impl HttpClients {
    /// Clients whose every request goes to a local stand-in (for `mcp-serve test`).
    pub fn standing_in(address: std::net::SocketAddr) -> Self {
        Self {
            clients: Mutex::default(),
            stand_in: Some(address),
        }
    }

    /// Whether every request goes to a stand-in.
    pub fn is_standing_in(&self) -> bool {
        self.stand_in.is_some()
    }

    /// Sends `request` to the stand-in, if there is one: `http://ADDR`, with the path and
    /// query the tool built. A URL that cannot be rerouted is an error, never sent as it was.
    pub fn reroute(&self, request: &mut reqwest::Request) -> Result<(), ClientError> {
        let Some(address) = self.stand_in else {
            return Ok(());
        };
        let url = request.url_mut();
        url.set_scheme("http")
            .and_then(|()| url.set_ip_host(address.ip()))
            .and_then(|()| url.set_port(Some(address.port())))
            .map_err(|()| ClientError::StandIn(url.to_string()))
    }

    /// The client for `rules`, made on the first call that needs it.
    pub fn get(&self, rules: RedirectRules) -> Result<reqwest::Client, ClientError> {
        let mut clients = self.clients.lock().map_err(|_| ClientError::Poisoned)?;
        if let Some(client) = clients.get(&rules) {
            return Ok(client.clone());
        }
        // A stand-in's client never uses a proxy from the environment and never follows a
        // redirect: the example's request goes to the stand-in and nowhere else.
        let client = if self.stand_in.is_some() {
            make_for_stand_in()
        } else {
            make(rules)
        }
        .map_err(ClientError::Make)?;
        clients.insert(rules, client.clone());
        Ok(client)
    }
}

fn make_for_stand_in() -> reqwest::Result<reqwest::Client> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .user_agent(concat!("mcp-serve/", env!("CARGO_PKG_VERSION")))
        .build()
}

fn make(rules: RedirectRules) -> reqwest::Result<reqwest::Client> {
    // rustls with the ring provider (no OpenSSL, no C toolchain beyond what ring needs);
    // installing twice is harmless.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let RedirectRules {
        max_redirects,
        allow_other_hosts,
        carries_secrets,
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
        } else if !same_origin && carries_secrets {
            let target = attempt.url().host_str().unwrap_or_default().to_owned();
            attempt.error(format!(
                "a redirect to another host (`{target}`) was refused: the request carries secrets"
            ))
        } else {
            attempt.follow()
        }
    });
    reqwest::Client::builder()
        .redirect(policy)
        // A `Referer` would hand the previous URL (its query too) to the next host.
        .referer(false)
        .user_agent(concat!("mcp-serve/", env!("CARGO_PKG_VERSION")))
        .tcp_nodelay(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(max_redirects: u8) -> RedirectRules {
        RedirectRules {
            max_redirects,
            allow_other_hosts: false,
            carries_secrets: false,
        }
    }

    #[test]
    fn a_client_is_made_on_first_use_and_shared_by_rules() {
        let clients = HttpClients::default();
        assert!(
            clients.clients.lock().expect("lock").is_empty(),
            "made before use"
        );
        clients.get(rules(3)).expect("client");
        clients.get(rules(3)).expect("client");
        assert_eq!(clients.clients.lock().expect("lock").len(), 1, "made twice");
        clients.get(rules(4)).expect("client");
        assert_eq!(clients.clients.lock().expect("lock").len(), 2);
    }
}
