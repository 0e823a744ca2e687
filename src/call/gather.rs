//! Stage 5's seam: how an entry point asks what a tool needs to know before it runs. The
//! engine that decides what to ask is `crate::inputs` (pure); a [`Gatherer`] drives it over
//! one medium: the client's connection (2025), `input_required` rounds with a sealed
//! `requestState` (2026), the task's own rounds, or the terminal.

use std::future::Future;

use serde_json::{Map, Value};

use crate::tool::Tool;

/// What gathering came to.
#[derive(Debug)]
pub enum Gathered<P> {
    /// Go on with these arguments (answers joined as placeholders).
    Ready(Map<String, Value>),
    /// Ask the client, which comes back with the answers (2026): the entry's answer.
    Pending(P),
    /// The call stops before it runs, for this reason (a tool error).
    Refused(String),
}

/// One medium for asking.
pub trait Gatherer: Send {
    /// The entry's request for input, when the client answers in a later request.
    type Pending: Send;
    /// A refusal that is the client's protocol error, not a tool error.
    type Error: Send;

    /// Gathers the tool's inputs for arguments already prepared.
    fn gather(
        &mut self,
        tool: &Tool,
        arguments: Map<String, Value>,
    ) -> impl Future<Output = Result<Gathered<Self::Pending>, Self::Error>> + Send;
}
