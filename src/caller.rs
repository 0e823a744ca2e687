//! Who is calling, as the transport saw it: built once per request (the stdio transport has
//! one client; the HTTP layer puts what it saw in the request's extensions) and carried
//! through the pipeline. Every policy that depends on the caller asks it here: the scopes it
//! holds, the key its rate is counted under, who owns its tasks and kept outputs, and whether
//! the server can ask it a question on its connection.

use std::net::IpAddr;

use crate::auth::{Principal, Subject};

/// What a call acts for: kept outputs and tasks belong to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Identity {
    /// The one client of a stdio server, or the person at `mcp-serve call`.
    Only,
    /// A 2025 HTTP session of a server with `--sessions` (rmcp checked the id).
    Session(String),
    /// A stateless HTTP request nothing identifies: `resources/list` shows it nothing; its
    /// links (unguessable) still read.
    Anonymous,
    /// An HTTP request with an OAuth access token: its subject, across replicas and
    /// reconnections.
    Subject(Subject),
}

impl Identity {
    /// The token's principal, for `{auth.…}` placeholders and scopes.
    pub fn principal(&self) -> Option<&Principal> {
        match self {
            Identity::Subject(subject) => Some(&subject.0),
            _ => None,
        }
    }
}

/// What the HTTP layer saw of a request, put in its extensions for the handler: the token's
/// subject (authentication ran first), the session id when the server keeps sessions, and
/// the client's address. The handler resolves it to a [`Caller`] once it knows the request's
/// protocol revision (a 2026 request has no session, whatever its headers say).
#[derive(Debug, Clone, Default)]
pub struct Seen {
    pub subject: Option<Subject>,
    pub session: Option<String>,
    pub address: Option<IpAddr>,
    /// The server keeps sessions (`--sessions`): what a 2025 client declares at
    /// `initialize` holds for its later requests. Without them it holds for none.
    pub lasting: bool,
}

impl Seen {
    /// The caller of a request of this lifecycle.
    pub fn caller(&self, stateless: bool) -> Caller {
        let session = self.session.as_ref().filter(|_| !stateless);
        let identity = match (&self.subject, session) {
            (Some(subject), _) => Identity::Subject(subject.clone()),
            (None, Some(session)) => Identity::Session(session.clone()),
            (None, None) => Identity::Anonymous,
        };
        Caller {
            identity,
            address: self.address,
            back_channel: session.is_some(),
            apps: false,
        }
    }
}

/// The caller of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub identity: Identity,
    /// The client's address, over HTTP.
    pub address: Option<IpAddr>,
    /// The server can send it a request and hear the answer on this connection (stdio, or a
    /// 2025 session rmcp keeps), so questions can be asked there.
    pub back_channel: bool,
    /// It renders MCP Apps (its capabilities declare `io.modelcontextprotocol/ui`), so
    /// it sees tools' pages and may call a tool only a page may call ([`crate::app`]).
    /// The person at a terminal sees every tool.
    pub apps: bool,
}

/// A token that lacks a scope the tool needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{tool}` needs the scope {}", missing.join(" "))]
pub struct Ungranted {
    pub tool: String,
    pub missing: Vec<String>,
}

impl Caller {
    /// The one client of a stdio server, or the person at a terminal.
    pub fn only() -> Self {
        Self {
            identity: Identity::Only,
            address: None,
            back_channel: true,
            apps: true,
        }
    }

    pub fn principal(&self) -> Option<&Principal> {
        self.identity.principal()
    }

    /// Whether its token grants `scopes` (a caller without a token is not checked here:
    /// the HTTP layer lets it in only where the server needs no token).
    pub fn grants(&self, tool: &str, scopes: &[String]) -> Result<(), Ungranted> {
        match self.principal() {
            Some(principal) if !principal.grants(scopes) => Err(Ungranted {
                tool: tool.to_owned(),
                missing: principal
                    .missing(scopes)
                    .into_iter()
                    .map(str::to_owned)
                    .collect(),
            }),
            _ => Ok(()),
        }
    }

    /// Who a rate limit counts: the token's subject, else the client's address (never a
    /// session, which a client can replace at will); the one stdio client is one caller.
    pub fn rate_key(&self) -> String {
        match (&self.identity, self.address) {
            (Identity::Subject(subject), _) => format!("sub:{}", subject.0.subject),
            (Identity::Only, _) => "stdio".to_owned(),
            (_, Some(address)) => crate::rate::address_key(address),
            (_, None) => "anonymous".to_owned(),
        }
    }

    /// Who owns its tasks: its session, or its token's subject (a prefix no session id has,
    /// so a subject never names a session's tasks). The store keeps only a keyed tag of it
    /// (`tasks::owner`), never the session id itself. `None`: callers nothing tells apart.
    pub fn task_owner(&self) -> Option<String> {
        match &self.identity {
            Identity::Session(session) => Some(session.clone()),
            Identity::Subject(subject) => Some(format!("sub:{}", subject.0.subject)),
            Identity::Only | Identity::Anonymous => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn subject(name: &str, scopes: &[&str]) -> Subject {
        Subject(std::sync::Arc::new(Principal {
            subject: name.to_owned(),
            scopes: scopes.iter().map(|scope| (*scope).to_owned()).collect(),
            claims: serde_json::Map::new(),
        }))
    }

    #[test]
    fn a_stateless_request_has_no_session_whatever_its_headers() {
        let seen = Seen {
            subject: None,
            session: Some("s1".into()),
            address: Some("192.0.2.1".parse().expect("address")),
            lasting: true,
        };
        let session = seen.caller(false);
        assert_eq!(session.identity, Identity::Session("s1".into()));
        assert!(session.back_channel);
        let stateless = seen.caller(true);
        assert_eq!(stateless.identity, Identity::Anonymous);
        assert!(!stateless.back_channel);
        // The rate key is the address either way: a new session resets nothing.
        assert_eq!(session.rate_key(), "ip:192.0.2.1");
        assert_eq!(stateless.rate_key(), session.rate_key());
    }

    #[test]
    fn a_subject_wins_and_its_scopes_are_checked() {
        let seen = Seen {
            subject: Some(subject("ann", &["read"])),
            session: Some("s1".into()),
            address: None,
            lasting: true,
        };
        let caller = seen.caller(false);
        assert_eq!(caller.rate_key(), "sub:ann");
        assert!(caller.back_channel, "the session still carries questions");
        assert!(caller.grants("t", &["read".into()]).is_ok());
        let refused = caller
            .grants("t", &["read".into(), "write".into()])
            .expect_err("write is missing");
        assert_eq!(refused.to_string(), "`t` needs the scope write");
        assert!(Caller::only().grants("t", &["write".into()]).is_ok());
    }

    #[test]
    fn task_owners_keep_sessions_and_subjects_apart() {
        let session = Seen {
            session: Some("s1".into()),
            ..Seen::default()
        };
        assert_eq!(session.caller(false).task_owner().as_deref(), Some("s1"));
        assert_eq!(
            session.caller(true).task_owner(),
            None,
            "no session in 2026"
        );
        let ann = Seen {
            subject: Some(subject("ann", &[])),
            session: Some("s1".into()),
            ..Seen::default()
        }
        .caller(false);
        assert_eq!(ann.task_owner().as_deref(), Some("sub:ann"));
        assert_eq!(Caller::only().task_owner(), None);
    }
}
