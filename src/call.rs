//! The one call pipeline. Every tool call goes through [`run`], whatever brought it: stdio or
//! HTTP, either lifecycle, the first `tools/call` or a later round that answers its
//! questions, a task started or resumed, `mcp-serve call`, `call --task` and `mcp-serve
//! test`. An entry point only says where the call came from (its [`Caller`], how it gathers
//! answers, whether it may become a task); each policy below is written once, here.
//!
//! The stages, in order:
//!
//! 1. **find** the tool in the registry the call started on;
//! 2. **authorize**: the caller's token holds the tool's scopes;
//! 3. **task or not**: the tool's `task` policy against what the request declared (a
//!    `required` tool refuses a request that cannot have its task);
//! 4. **prepare** the arguments: defaults filled, validated against the input schema (a
//!    violation is a tool error the model can correct); a tool that names the caller
//!    (`{auth.…}`) needs a token at all;
//! 5. **gather** what the tool asks before it runs (`confirm`, `[tools.ask]`,
//!    `[tools.sample]`, `roots`) through the entry's [`Gatherer`]: the connection (2025),
//!    `input_required` rounds (2026), the terminal; inside the task instead, for an
//!    `ask-in-task` tool;
//! 6. **rate**: the call is counted against the tool's rate for this caller, once, when it
//!    is about to run or to become a task: after its questions (an `ask-in-task` tool's come
//!    later, inside the task), so neither skipping the rounds nor replaying an answered
//!    round runs it uncounted;
//! 7. **task**: kept in the task store, which runs stages 8 to 10 later (`call::task`);
//! 8. **slot**: one of the server's `--max-calls` (waiting in `--queue`) and one of the
//!    tool's own `max-calls`;
//! 9. **backend** with the one [`CallContext`] (whose event sender redacts each event as it
//!    is sent), then the **output** pipeline (`crate::results`), the redaction of every
//!    manifest secret, once, and the result shaped for the client's protocol revision (an
//!    entry only encodes what it gets);
//! 10. **record**: one metrics outcome per call that ended, one audit record per request.

mod gather;
mod record;
mod slot;
mod task;

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::sync::mpsc;

pub use gather::{Gathered, Gatherer};

pub use task::{AsTask, Keep, Tasking};

use crate::backend::CallContext;
use crate::backend::events_pipe::EventSender;
use crate::backend::http::HttpClients;
use crate::backend::processes::Processes;
use crate::caller::{Caller, Identity, Ungranted};
use crate::events::CallEvent;
use crate::outcome::Outcome;
use crate::registry::{Registry, UnknownTool};
use crate::results::ToolResult;
use crate::revision::Revision;
use crate::tasks::Tasks;
use crate::tool::Tool;

/// What every call can reach, whoever serves it: made once per server or CLI command.
#[derive(Debug)]
pub struct Services {
    /// Every command is started and cleaned up through it.
    pub processes: Arc<Processes>,
    /// The HTTP tools' clients, kept across reloads with their connection pools.
    pub clients: HttpClients,
    /// Where calls are counted (`--metrics`), if anywhere.
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
    /// What is recorded per call (`--audit`).
    pub audit: crate::audit::Audit,
    /// The server's `--max-calls` and `--queue`; none at a terminal.
    pub calls: Option<crate::limit::Slots>,
    /// Where tasks are kept; none: no call becomes a task.
    pub tasks: Option<Arc<Tasks>>,
    /// The egress proxy, through which commands with a host list reach the network.
    pub egress: Arc<crate::egress::Egress>,
    /// The workers `project` programs run in.
    pub projector: Arc<crate::backend::projector::Projector>,
}

impl Services {
    /// For one command at a terminal (`call`, `test`): no server limit, no metrics.
    pub fn terminal(processes: Arc<Processes>, clients: HttpClients) -> Self {
        Self {
            projector: Arc::new(crate::backend::projector::Projector::new(Arc::clone(
                &processes,
            ))),
            processes,
            clients,
            metrics: None,
            audit: crate::audit::Audit::default(),
            calls: None,
            tasks: None,
            egress: Arc::new(crate::egress::Egress::new(None)),
        }
    }
}

/// What a call runs against: the registry it started on (a reload does not change it
/// mid-call) and the variables withheld from its commands.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub registry: Arc<Registry>,
    /// The server's own secrets' variables and the manifest's.
    pub withheld_env: Arc<[String]>,
}

impl Loaded {
    /// A registry served with only its own withheld variables (at a terminal).
    pub fn alone(registry: Arc<Registry>) -> Self {
        let withheld_env = registry.withheld_env().into();
        Self {
            registry,
            withheld_env,
        }
    }
}

/// One call, as its entry point hands it over.
#[derive(Debug)]
pub struct Call<G> {
    pub tool: String,
    pub arguments: Option<Map<String, Value>>,
    pub caller: Caller,
    /// Where progress and log events go, when the client wants them (the pipeline puts
    /// the redactor in front).
    pub events: Option<mpsc::Sender<CallEvent>>,
    /// The protocol revision of the client the result is for, which shapes it (structured
    /// content wrapped, content blocks an older client cannot take replaced); `None` keeps
    /// it as the backend made it (a terminal prints it).
    pub revision: Option<Revision>,
    pub tasking: Tasking,
    /// How this entry asks what the tool needs to know.
    pub gatherer: G,
}

/// What a call came to.
#[derive(Debug)]
pub enum Conclusion<P> {
    /// It ran (or was refused as a tool error): the revision-neutral result.
    Done(ToolResult),
    /// It needs answers first (2026): the entry's request for input.
    Pending(P),
    /// It became this task.
    Task(Box<crate::tasks::Record>),
}

/// Why a call got no answer at all: a protocol error for the entry to report.
#[derive(Debug, thiserror::Error)]
pub enum CallError<E> {
    #[error(transparent)]
    UnknownTool(#[from] UnknownTool),
    #[error(transparent)]
    Ungranted(#[from] Ungranted),
    /// The gatherer could not go on (a forged state, a missing capability).
    #[error("the call's answers were refused")]
    Gather(E),
    /// A `task = "required"` tool, and the request does not declare the tasks extension.
    #[error(
        "`{0}` runs only as a task, and this request's clientCapabilities do not declare the io.modelcontextprotocol/tasks extension"
    )]
    TaskRequired(String),
    #[error("could not start the task: {0}")]
    TaskStart(#[source] crate::tasks::TaskStoreError),
    #[error("the request was cancelled")]
    Cancelled,
}

/// How a call ended, with the time its backend took (what the metrics observe).
#[derive(Debug, Clone, Copy)]
struct Ended {
    outcome: Outcome,
    ran: Duration,
}

impl Ended {
    fn before_running(outcome: Outcome) -> Self {
        Self {
            outcome,
            ran: Duration::ZERO,
        }
    }
}

/// Runs a call through every stage; `cancelled` resolving stops it (and its backend's
/// process group) wherever it is.
pub async fn run<G: Gatherer>(
    served: &Loaded,
    services: &Arc<Services>,
    call: Call<G>,
    cancelled: impl Future<Output = ()> + Send,
) -> Result<Conclusion<G::Pending>, CallError<G::Error>> {
    let started = Instant::now();
    let name = call.tool.clone();
    let caller = call.caller.clone();
    let audited = services
        .audit
        .enabled
        .then(|| call.arguments.clone())
        .flatten();
    let answered = tokio::select! {
        answered = stages(served, services, call) => answered,
        () = cancelled => Err(CallError::Cancelled),
    };
    let ended = match &answered {
        Ok((_, ended)) => *ended,
        Err(CallError::Cancelled) => Ended::before_running(Outcome::Cancelled),
        Err(_) => Ended::before_running(Outcome::Refused),
    };
    let known = !matches!(answered, Err(CallError::UnknownTool(_)));
    record::record(
        services,
        &served.registry,
        &record::Finished {
            tool: &name,
            known,
            caller: &caller,
            ended: ended.outcome,
            ran: ended.ran,
            took: started.elapsed(),
            arguments: audited.as_ref(),
        },
    );
    answered.map(|(answer, _)| answer)
}

type Staged<P, E> = Result<(Conclusion<P>, Ended), CallError<E>>;

async fn stages<G: Gatherer>(
    served: &Loaded,
    services: &Arc<Services>,
    call: Call<G>,
) -> Staged<G::Pending, G::Error> {
    let Call {
        tool,
        arguments,
        caller,
        events,
        revision,
        tasking,
        mut gatherer,
    } = call;
    // A misspelt name is answered with a tool this caller may call, never another.
    // A tool only an MCP App's page may call is unknown to a client that renders none.
    let tool = Arc::clone(served.registry.find_among(
        &tool,
        |tool| tool.shown_to(caller.apps),
        |tool| caller.grants(&tool.name, &tool.scopes).is_ok(),
    )?);
    let shape = Shape {
        revision,
        wrapped: tool.wrapped_as_object(),
    };
    // A refusal may quote the arguments (a schema violation names the value).
    let refused = |outcome, message: String| {
        let result = ToolResult::error(message).redacted(served.registry.redactor());
        Ok((
            Conclusion::Done(shape.apply(result)),
            Ended::before_running(outcome),
        ))
    };
    caller.grants(&tool.name, &tool.scopes)?;
    // Before the arguments: a request that cannot have this tool's task is refused as the
    // protocol error it is, whatever it carries.
    let as_task = task::decide(&tool, services.tasks.as_ref(), tasking)?;
    let arguments = match tool.prepare(arguments) {
        Ok(arguments) => arguments,
        Err(invalid) => return refused(Outcome::InvalidArguments, invalid.to_string()),
    };
    if tool.uses_identity && caller.principal().is_none() {
        // Without a token the identity would be missing, and a missing `{auth.sub}` leaves
        // out what it fills: never run such a call for nobody.
        let message = format!(
            "`{}` acts for the caller an OAuth access token names, and this request carries none",
            tool.name
        );
        return refused(Outcome::Refused, message);
    }
    let asks_inside = as_task
        .as_ref()
        .is_some_and(|(_, as_task)| as_task.asks_inside && tool.ask_in_task);
    let (arguments, left) = if tool.inputs.is_empty() || asks_inside {
        (arguments, tool.inputs.clone())
    } else {
        // Boxed, as the other stages a plain call skips: a call's future stays small.
        match Box::pin(gatherer.gather(&tool, arguments))
            .await
            .map_err(CallError::Gather)?
        {
            Gathered::Ready(arguments) => (arguments, crate::inputs::Inputs::default()),
            Gathered::Pending(pending) => {
                return Ok((
                    Conclusion::Pending(pending),
                    Ended::before_running(Outcome::Pending),
                ));
            }
            Gathered::Refused(message) => return refused(Outcome::Refused, message),
        }
    };
    if let Some(message) = over_rate(&tool, &caller) {
        return refused(Outcome::RateLimited, message);
    }
    if let Some((tasks, as_task)) = as_task {
        let job = task::Start {
            served: served.clone(),
            services: Arc::clone(services),
            tool,
            arguments,
            inputs: left,
            caller,
            shape,
            as_task,
        };
        let record = Box::pin(job.start(&tasks))
            .await
            .map_err(CallError::TaskStart)?;
        return Ok((
            Conclusion::Task(Box::new(record)),
            Ended::before_running(Outcome::Task),
        ));
    }
    let (result, ended) =
        execute(served, services, &tool, &arguments, caller.identity, events).await;
    Ok((Conclusion::Done(shape.apply(result)), ended))
}

/// How a result is shaped for the client it goes to: the request's revision, and whether
/// the tool's output schema is listed wrapped (so listing and result agree).
#[derive(Debug, Clone, Copy)]
struct Shape {
    revision: Option<Revision>,
    wrapped: bool,
}

impl Shape {
    fn apply(self, result: ToolResult) -> ToolResult {
        match self.revision {
            Some(revision) => result.for_revision(revision, self.wrapped),
            None => result,
        }
    }
}

/// The tool's rate for this caller, counted: the message that refuses a call over it.
fn over_rate(tool: &Tool, caller: &Caller) -> Option<String> {
    let refused = tool.rate.as_ref()?.check(&caller.rate_key()).err()?;
    tracing::info!(tool = %tool.name, retry_after = ?refused.retry_after, "refused a call over its rate");
    Some(refused.to_string())
}

/// Stages 8 and 9, for a call now or a task later: a slot, the backend, the output.
async fn execute(
    served: &Loaded,
    services: &Services,
    tool: &Tool,
    arguments: &Map<String, Value>,
    identity: Identity,
    events: Option<mpsc::Sender<CallEvent>>,
) -> (ToolResult, Ended) {
    let slots = match slot::acquire(services, tool).await {
        Ok(slots) => slots,
        Err(at_limit) => {
            let ended = Ended::before_running(Outcome::Busy);
            return (ToolResult::error(at_limit.to_string()), ended);
        }
    };
    let started = Instant::now();
    let _running = services
        .metrics
        .as_deref()
        .map(crate::metrics::Metrics::call_started);
    // Each event is redacted as the backend sends it (`EventSender`), before any consumer
    // holds it.
    let events =
        events.map(|channel| EventSender::new(channel, served.registry.redactor().clone()));
    let context = CallContext {
        tool: &tool.name,
        store: served.registry.store(),
        caller: identity,
        events,
        withheld_env: &served.withheld_env,
        processes: &services.processes,
        egress: &services.egress,
        clients: &services.clients,
        redactor: served.registry.redactor(),
        projector: &services.projector,
    };
    let schema = tool.output.as_ref().map(|output| &output.compiled);
    // Only a tool that names the caller gets the identity (a copy of the arguments);
    // others only lose a client's own `auth.…` keys, which costs nothing when absent.
    let principal = tool
        .uses_identity
        .then(|| context.caller.principal())
        .flatten();
    let arguments = crate::auth::attach(arguments, principal);
    let result = tool
        .backend
        .call(&arguments, &tool.output_spec, schema, &context)
        .await
        .redacted(context.redactor);
    drop(context);
    drop(slots);
    let outcome = if result.is_error {
        Outcome::Error
    } else {
        Outcome::Ok
    };
    let ended = Ended {
        outcome,
        ran: started.elapsed(),
    };
    (result, ended)
}
