//! Runs tasks in this process and answers for the store: `start` keeps the record and
//! spawns the work; `get`, `answer` and `cancel` read and change a task wherever it runs.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::owner::is_tag;
use super::record::{LogLine, Progress};
use super::store::{Signal, TaskStore, TaskStoreError, TaskStoreLocation};
use super::{Limits, Record, Settings, Status, now_ms};
use crate::events::CallEvent;
use crate::inputs::{Capability, Inputs, Step, Stop};

/// How often a waiting task looks for answers when no signal can tell it.
const ANSWER_POLL: Duration = Duration::from_millis(250);
/// Progress is written to the store at most this often.
const PROGRESS_WRITES: Duration = Duration::from_millis(250);
/// How long a finished task's outcome is retried when the store is away.
const OUTCOME_RETRIES: Duration = Duration::from_secs(30);
/// Ended tasks are purged at most this often.
const PURGE_EVERY_MS: u64 = 60_000;

/// The `-32021` a task fails with when it needs what the client did not declare.
const MISSING_CAPABILITY: i64 = -32021;

/// What the protocol layer runs for a task: the tool's call, its result as JSON.
pub trait Execute: Send + Sync + 'static {
    /// Runs the call with the answers joined to `arguments`; events go to `events`.
    fn execute(
        &self,
        arguments: Map<String, Value>,
        events: tokio::sync::mpsc::Sender<CallEvent>,
    ) -> Pin<Box<dyn Future<Output = Map<String, Value>> + Send + '_>>;

    /// A tool error result saying `message` (the call stopped before it ran).
    fn refused(&self, message: String) -> Map<String, Value>;
}

/// A task to start.
pub struct Job {
    pub tool: String,
    /// Who may see the task: its session, or its token's subject.
    pub owner: Option<String>,
    /// Who the per-caller bounds count it for: its token's subject, else its address
    /// ([`crate::caller::Caller::rate_key`]), so opening sessions gets a client no more.
    pub bucket: String,
    pub arguments: Map<String, Value>,
    pub inputs: Inputs,
    /// What the client declared it can be asked for.
    pub capabilities: crate::inputs::Capabilities,
    pub settings: Settings,
    pub execute: Box<dyn Execute>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Job")
            .field("tool", &self.tool)
            // A session id is a credential: never in a log line.
            .field("owner", &self.owner.as_ref().map(|_| "[redacted]"))
            .field("bucket", &"[redacted]")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// A reason a task cannot be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum TaskError {
    #[error("`{0}` is not a task id (32 lowercase hex digits)")]
    Malformed(String),
    #[error("no task `{0}`: unknown, or forgotten after its ttlMs")]
    Unknown(String),
    #[error(transparent)]
    Store(#[from] TaskStoreError),
}

/// Who asks about a task: a client (sees only its own tasks), or the operator.
#[derive(Clone, Copy)]
pub enum Whom<'a> {
    /// A client, and what names it (its session, its token's subject), if anything.
    Caller(Option<&'a str>),
    /// `mcp-serve tasks`: every task.
    Operator,
}

impl std::fmt::Debug for Whom<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Caller(owner) => formatter
                .debug_tuple("Caller")
                .field(&owner.map(|_| "[redacted]"))
                .finish(),
            Self::Operator => formatter.write_str("Operator"),
        }
    }
}

impl Whom<'_> {
    /// Whether it may see `record`, in `store` (where owners are kept as tags).
    fn may_see(self, store: &TaskStore, record: &Record) -> bool {
        match self {
            Self::Caller(None) => record.owner.is_none(),
            Self::Caller(Some(owner)) => record.owner.as_deref().is_some_and(|kept| {
                // A record an older version wrote in Redis holds the owner itself, until it
                // expires; SQLite's were given their tags when the file was first opened.
                kept == store.tag(owner) || (!is_tag(kept) && kept == owner)
            }),
            Self::Operator => true,
        }
    }
}

/// A task running here.
#[derive(Debug, Default)]
struct Local {
    cancel: CancellationToken,
    answered: Notify,
}

/// The tasks of this process, and the store they share with others.
#[derive(Debug)]
pub struct Tasks {
    location: TaskStoreLocation,
    store: tokio::sync::OnceCell<TaskStore>,
    /// `host:pid:time`, named in the records of the tasks this process runs (for people to
    /// read); made on first use (the host name is a `/proc` read a server without tasks need
    /// not pay for at start-up).
    replica: std::sync::OnceLock<String>,
    lease: Duration,
    limits: Limits,
    running: Mutex<HashMap<String, Arc<Local>>>,
    last_purge: AtomicU64,
}

impl Tasks {
    fn replica(&self) -> &str {
        self.replica.get_or_init(|| {
            let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
                .map(|name| name.trim().to_owned())
                .unwrap_or_default();
            format!("{host}:{}:{}", std::process::id(), now_ms())
        })
    }

    /// Tasks in the store at `location`, with the default [`Limits`].
    pub fn new(location: TaskStoreLocation, lease: Duration) -> Arc<Self> {
        Self::with_limits(location, lease, Limits::default())
    }

    /// Tasks in the store at `location`, which this process keeps within `limits`.
    pub fn with_limits(location: TaskStoreLocation, lease: Duration, limits: Limits) -> Arc<Self> {
        Arc::new(Self {
            location,
            store: tokio::sync::OnceCell::new(),
            replica: std::sync::OnceLock::new(),
            lease,
            limits,
            running: Mutex::new(HashMap::new()),
            last_purge: AtomicU64::new(0),
        })
    }

    pub fn location(&self) -> &TaskStoreLocation {
        &self.location
    }

    /// The store, opened on first use; signals from other processes are then heard.
    pub async fn store(self: &Arc<Self>) -> Result<&TaskStore, TaskStoreError> {
        self.store
            .get_or_try_init(|| async {
                let store = TaskStore::open(&self.location, self.limits).await?;
                if let Some(mut signals) = store.signals().await? {
                    let tasks = Arc::downgrade(self);
                    tokio::spawn(async move {
                        while let Some(signal) = signals.recv().await {
                            let Some(tasks) = tasks.upgrade() else { return };
                            tasks.heard(&signal);
                        }
                    });
                }
                Ok(store)
            })
            .await
    }

    fn local(&self, id: &str) -> Option<Arc<Local>> {
        self.running.lock().ok()?.get(id).cloned()
    }

    fn heard(&self, signal: &Signal) {
        match signal {
            Signal::Cancel(id) => {
                if let Some(local) = self.local(id) {
                    local.cancel.cancel();
                }
            }
            Signal::Answer(id) => {
                if let Some(local) = self.local(id) {
                    local.answered.notify_one();
                }
            }
        }
    }

    /// Keeps a new task and starts it; the record is readable everywhere once this returns.
    /// A task past one of the store's bounds is refused ([`TaskStoreError::Full`]) and not run.
    pub async fn start(self: &Arc<Self>, job: Job) -> Result<Record, TaskStoreError> {
        let store = self.store().await?.clone();
        let now = now_ms();
        let mut record = Record {
            id: super::new_id()?,
            tool: job.tool.clone(),
            owner: None,
            status: Status::Working,
            message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: duration_ms(job.settings.ttl),
            poll_ms: duration_ms(job.settings.poll_interval).max(1),
            lease_ms: now.saturating_add(duration_ms(self.lease)),
            lease_for_ms: duration_ms(self.lease),
            replica: self.replica().to_owned(),
            input_requests: None,
            result: None,
            error: None,
            progress: None,
            logs: Vec::new(),
            logged: 0,
            held_bytes: held(&job.arguments),
        };
        store
            .create(&mut record, job.owner.as_deref(), Some(&job.bucket))
            .await?;
        let local = Arc::new(Local::default());
        if let Ok(mut running) = self.running.lock() {
            running.insert(record.id.clone(), Arc::clone(&local));
        }
        let tasks = Arc::clone(self);
        let first = record.clone();
        // The task's backend run joins the trace of the call that started it.
        let trace = opentelemetry::Context::current();
        self.maybe_purge(&store, now);
        tokio::spawn(async move {
            let id = first.id.clone();
            let outcome = tokio::spawn(opentelemetry::context::FutureExt::with_context(
                Arc::clone(&tasks).run(store.clone(), first, job, local),
                trace,
            ))
            .await;
            if outcome.is_err() {
                // The work panicked: the task fails rather than run forever.
                if let Ok(Some(mut record)) = store.get(&id).await {
                    let ttl = record.ttl_ms;
                    record.fail(
                        -32603,
                        "the task failed inside the server",
                        None,
                        ttl,
                        now_ms(),
                    );
                    let _ = store.update(&record).await;
                }
            }
            if let Ok(mut running) = tasks.running.lock() {
                running.remove(&id);
            }
        });
        Ok(record)
    }

    fn maybe_purge(&self, store: &TaskStore, now: u64) {
        let last = self.last_purge.load(Ordering::Relaxed);
        if now.saturating_sub(last) < PURGE_EVERY_MS
            || self
                .last_purge
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let store = store.clone();
        tokio::spawn(async move {
            // Tasks whose process died and that nobody reads are failed, then forgotten in turn.
            if let Ok(records) = store.list().await {
                for record in records {
                    let _ = fail_if_lapsed(&store, record, now_ms()).await;
                }
            }
            match store.purge().await {
                Ok(0) => {}
                Ok(purged) => tracing::debug!(purged, "forgot expired tasks"),
                Err(error) => tracing::warn!(%error, "purging expired tasks failed"),
            }
        });
    }

    async fn run(self: Arc<Self>, store: TaskStore, record: Record, job: Job, local: Arc<Local>) {
        let shared = Arc::new(tokio::sync::Mutex::new(record));
        let renewing = AbortOnDrop(tokio::spawn(renew(
            store.clone(),
            Arc::clone(&shared),
            self.lease,
            store.polled(),
            local.cancel.clone(),
        )));
        let ttl = duration_ms(job.settings.ttl);
        let outcome = tokio::select! {
            outcome = work(&store, &shared, &job, &local) => Some(outcome),
            () = local.cancel.cancelled() => None,
        };
        drop(renewing);
        let mut record = shared.lock().await;
        let now = now_ms();
        match outcome {
            Some(Ok(result)) => {
                let failed = result.get("isError") == Some(&Value::Bool(true));
                record.message = Some(
                    if failed {
                        "the tool reported an error"
                    } else {
                        "done"
                    }
                    .into(),
                );
                record.result = Some(result);
                record.end(Status::Completed, ttl, now);
            }
            Some(Err((code, message, data))) => record.fail(code, &message, data, ttl, now),
            // Cancelled: whoever cancelled wrote the status.
            None => return,
        }
        // The outcome is worth retrying: a store that is away for a moment (a Redis
        // failover, a busy SQLite file) must not turn a finished task into a failed one.
        let mut pause = Duration::from_millis(100);
        let deadline = tokio::time::Instant::now() + OUTCOME_RETRIES;
        loop {
            match store.update(&record).await {
                Ok(true) => return,
                Ok(false) => {
                    tracing::debug!(task = %record.id, "the task had ended elsewhere first");
                    return;
                }
                Err(TaskStoreError::Full(full)) => {
                    // The result would pass a bound: the task fails, saying so, and the
                    // small failure is written in its place.
                    let bytes = serde_json::to_string(&record.result).map_or(0, |text| text.len());
                    tracing::warn!(task = %record.id, bytes, %full, "a task's result was not kept");
                    let message = format!(
                        "the result ({}) was not kept: {full}",
                        crate::units::size_text(u64::try_from(bytes).unwrap_or(u64::MAX))
                    );
                    record.fail(-32603, &message, None, ttl, now_ms());
                }
                Err(error) if tokio::time::Instant::now() + pause > deadline => {
                    tracing::error!(task = %record.id, %error, "could not keep a task's outcome");
                    return;
                }
                Err(error) => {
                    tracing::warn!(task = %record.id, %error, "keeping a task's outcome failed; retrying");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(2));
                }
            }
        }
    }

    /// The task as its owner may see it; a task whose process stopped renewing its lease
    /// is failed first. With the answers given so far, when it is asking.
    pub async fn get(
        self: &Arc<Self>,
        id: &str,
        whom: Whom<'_>,
    ) -> Result<(Record, Vec<String>), TaskError> {
        if !super::well_formed(id) {
            return Err(TaskError::Malformed(id.to_owned()));
        }
        let store = self.store().await?;
        let found = store.get(id).await?;
        let exists = found.is_some();
        let mut visible = found.filter(|record| whom.may_see(store, record));
        // Another process may have made the owner key anew (Redis lost it): read it again
        // before saying a caller's task is not there.
        if visible.is_none()
            && exists
            && matches!(whom, Whom::Caller(Some(_)))
            && store.reread_key().await?
        {
            visible = store
                .get(id)
                .await?
                .filter(|record| whom.may_see(store, record));
        }
        let mut record = visible.ok_or_else(|| TaskError::Unknown(id.to_owned()))?;
        if record.lease_lapsed(now_ms()) {
            record = fail_if_lapsed(store, record, now_ms())
                .await?
                .ok_or_else(|| TaskError::Unknown(id.to_owned()))?;
        }
        let answered = if record.status == Status::InputRequired {
            store.answers(id).await?.keys().cloned().collect()
        } else {
            Vec::new()
        };
        Ok((record, answered))
    }

    /// Keeps answers to the questions the task is asking now (others are ignored) and
    /// wakes it.
    pub async fn answer(
        self: &Arc<Self>,
        id: &str,
        whom: Whom<'_>,
        responses: Map<String, Value>,
    ) -> Result<(), TaskError> {
        let (record, answered) = self.get(id, whom).await?;
        let asking = record.input_requests.unwrap_or_default();
        let wanted: Map<String, Value> = responses
            .into_iter()
            .filter(|(key, _)| asking.contains_key(key) && !answered.contains(key))
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let store = self.store().await?;
        store.answer(id, &wanted).await?;
        match self.local(id) {
            Some(local) => local.answered.notify_one(),
            None => store.signal(&Signal::Answer(id.to_owned())).await?,
        }
        Ok(())
    }

    /// Cancels a running task (an ended one is left as it is) and stops its work wherever
    /// it runs.
    pub async fn cancel(self: &Arc<Self>, id: &str, whom: Whom<'_>) -> Result<(), TaskError> {
        let (mut record, _) = self.get(id, whom).await?;
        if record.status.is_terminal() {
            return Ok(());
        }
        let ttl = record.ttl_ms;
        record.message = Some(
            match whom {
                Whom::Caller(_) => "cancelled by the client",
                Whom::Operator => "cancelled by an operator",
            }
            .into(),
        );
        record.end(Status::Cancelled, ttl, now_ms());
        let store = self.store().await?;
        if store.update(&record).await? {
            match self.local(id) {
                Some(local) => local.cancel.cancel(),
                None => store.signal(&Signal::Cancel(id.to_owned())).await?,
            }
        }
        Ok(())
    }

    /// The server is stopping: every task still running here is failed (`-32603`, saying
    /// so) and its work stopped; how many. Nothing is opened if no task ever ran.
    pub async fn abandon(&self) -> usize {
        let running: Vec<(String, Arc<Local>)> = self
            .running
            .lock()
            .map(|running| {
                running
                    .iter()
                    .map(|(id, local)| (id.clone(), Arc::clone(local)))
                    .collect()
            })
            .unwrap_or_default();
        let Some(store) = self.store.get() else {
            return 0;
        };
        let mut abandoned = 0;
        for (id, local) in running {
            local.cancel.cancel();
            if let Ok(Some(mut record)) = store.get(&id).await
                && !record.status.is_terminal()
            {
                let ttl = record.ttl_ms;
                record.fail(
                    -32603,
                    "the server stopped before this task finished",
                    None,
                    ttl,
                    now_ms(),
                );
                if store.update(&record).await.unwrap_or(false) {
                    abandoned += 1;
                }
            }
        }
        abandoned
    }

    /// Every task in the store (for operators); a task whose process died reads as failed.
    pub async fn list(self: &Arc<Self>) -> Result<Vec<Record>, TaskStoreError> {
        let store = self.store().await?;
        let mut records = Vec::new();
        for record in store.list().await? {
            if record.lease_lapsed(now_ms()) {
                if let Some(failed) = fail_if_lapsed(store, record, now_ms()).await? {
                    records.push(failed);
                }
            } else {
                records.push(record);
            }
        }
        Ok(records)
    }
}

type Failure = (i64, String, Option<Value>);

/// Aborts the task when dropped (also when the work panics).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Fails a task whose lease has lapsed, unless its process renewed it meanwhile; the task as
/// it is now (`None` if it is gone).
async fn fail_if_lapsed(
    store: &TaskStore,
    mut record: Record,
    now: u64,
) -> Result<Option<Record>, TaskStoreError> {
    if !record.lease_lapsed(now) {
        return Ok(Some(record));
    }
    let seen = record.lease_ms;
    let ttl = record.ttl_ms;
    record.fail(
        -32603,
        &format!(
            "the server running this task ({}) stopped before it finished: its lease ran out at {}",
            record.replica,
            super::record::timestamp(seen)
        ),
        None,
        ttl,
        now,
    );
    if store.fail_lapsed(&record, seen).await? {
        tracing::warn!(task = %record.id, replica = %record.replica, "a task's server stopped renewing its lease; the task failed");
        return Ok(Some(record));
    }
    store.get(&record.id).await
}

/// Asks the task's questions round by round, then runs the call, keeping progress and logs.
async fn work(
    store: &TaskStore,
    shared: &Arc<tokio::sync::Mutex<Record>>,
    job: &Job,
    local: &Local,
) -> Result<Map<String, Value>, Failure> {
    let can = |capability: Capability| job.capabilities.has(capability);
    let mut answers = Map::new();
    let arguments = loop {
        match job.inputs.step(&job.arguments, &answers, can) {
            Ok(Step::Ready(arguments)) => break arguments,
            Ok(Step::Ask(round)) => {
                let requests: Map<String, Value> = round
                    .iter()
                    .map(|request| (request.key.clone(), request.to_json()))
                    .collect();
                write(store, shared, |record| {
                    record.status = Status::InputRequired;
                    record.message = Some("waiting for the client's answers".into());
                    record.input_requests = Some(requests.clone());
                })
                .await;
                let id = shared.lock().await.id.clone();
                let waited = job.settings.ttl;
                let Some(given) = wait_for_answers(store, &id, &requests, local, waited).await
                else {
                    return Ok(job.execute.refused(format!(
                        "no answer came within {}s, so `{}` did not run",
                        waited.as_secs(),
                        job.tool
                    )));
                };
                answers.extend(given);
                write(store, shared, |record| {
                    record.status = Status::Working;
                    record.message = None;
                    record.input_requests = None;
                })
                .await;
            }
            Err(Stop::Refused(message)) => return Ok(job.execute.refused(message)),
            Err(Stop::Malformed(message)) => return Err((-32602, message, None)),
            Err(Stop::Missing(capability)) => {
                return Err((
                    MISSING_CAPABILITY,
                    format!(
                        "`{}` needs the client's support for {}, which the request that started this task did not declare",
                        job.tool,
                        capability.describe()
                    ),
                    Some(json!({"requiredCapabilities": {capability.key(): {}}})),
                ));
            }
        }
    };
    let (sender, receiver) = tokio::sync::mpsc::channel(256);
    let keeping = tokio::spawn(keep_events(store.clone(), Arc::clone(shared), receiver));
    let result = job.execute.execute(arguments, sender).await;
    // Every event is kept before the outcome.
    let _ = tokio::time::timeout(Duration::from_secs(1), keeping).await;
    Ok(result)
}

/// Writes a change to the task (only while it runs; a task that ended elsewhere is left).
async fn write(
    store: &TaskStore,
    shared: &Arc<tokio::sync::Mutex<Record>>,
    change: impl FnOnce(&mut Record),
) {
    let mut record = shared.lock().await;
    change(&mut record);
    record.updated_ms = now_ms();
    if let Err(error) = store.update(&record).await {
        tracing::warn!(task = %record.id, %error, "could not keep a task's progress");
    }
}

/// Waits until every question of the round is answered, at most `within`; the answers.
async fn wait_for_answers(
    store: &TaskStore,
    id: &str,
    requests: &Map<String, Value>,
    local: &Local,
    within: Duration,
) -> Option<Map<String, Value>> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Ok(answers) = store.answers(id).await
            && requests.keys().all(|key| answers.contains_key(key))
        {
            return Some(
                answers
                    .into_iter()
                    .filter(|(key, _)| requests.contains_key(key))
                    .collect(),
            );
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::select! {
            () = local.answered.notified() => {}
            () = tokio::time::sleep(ANSWER_POLL) => {}
        }
    }
}

/// Keeps the call's progress and logs with the task, writing at most every 250 ms.
async fn keep_events(
    store: TaskStore,
    shared: Arc<tokio::sync::Mutex<Record>>,
    mut events: tokio::sync::mpsc::Receiver<CallEvent>,
) {
    let mut dirty = false;
    let mut last_write = tokio::time::Instant::now();
    loop {
        let event = if dirty {
            let Ok(event) =
                tokio::time::timeout_at(last_write + PROGRESS_WRITES, events.recv()).await
            else {
                write(&store, &shared, |_| {}).await;
                dirty = false;
                last_write = tokio::time::Instant::now();
                continue;
            };
            event
        } else {
            events.recv().await
        };
        let Some(event) = event else { break };
        keep_event(&mut *shared.lock().await, event);
        dirty = true;
        // A flood of events is still written every interval.
        if tokio::time::Instant::now() >= last_write + PROGRESS_WRITES {
            write(&store, &shared, |_| {}).await;
            dirty = false;
            last_write = tokio::time::Instant::now();
        }
    }
    if dirty {
        write(&store, &shared, |_| {}).await;
    }
}

fn keep_event(record: &mut Record, event: CallEvent) {
    match event {
        CallEvent::Progress {
            progress,
            total,
            message,
        } => {
            if message.is_some() {
                record.message.clone_from(&message);
            }
            record.progress = Some(Progress {
                progress,
                total,
                message,
            });
        }
        CallEvent::Log {
            level,
            message,
            data,
        } => record.log(LogLine {
            at_ms: now_ms(),
            level: level.as_str().into(),
            message,
            data,
        }),
    }
}

/// Renews the lease while the task runs; stops the work when the task ended elsewhere (a
/// cancel through another process: with an embedded store this is how it is heard).
async fn renew(
    store: TaskStore,
    shared: Arc<tokio::sync::Mutex<Record>>,
    lease: Duration,
    polled: bool,
    cancel: CancellationToken,
) {
    let every = if polled {
        (lease / 3).min(Duration::from_secs(1))
    } else {
        lease / 3
    };
    loop {
        tokio::time::sleep(every).await;
        let mut record = shared.lock().await;
        record.lease_ms = now_ms().saturating_add(duration_ms(lease));
        match store.update(&record).await {
            Ok(true) => {}
            Ok(false) => {
                cancel.cancel();
                return;
            }
            Err(error) => {
                tracing::warn!(task = %record.id, %error, "could not renew a task's lease");
            }
        }
    }
}

/// What a task's arguments take while its process holds them: their length as JSON,
/// counted without writing them out.
fn held(arguments: &Map<String, Value>) -> u64 {
    struct Counted(u64);
    impl std::io::Write for Counted {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self
                .0
                .saturating_add(u64::try_from(bytes.len()).unwrap_or(u64::MAX));
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counted = Counted(0);
    let _ = serde_json::to_writer(&mut counted, arguments);
    counted.0
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
