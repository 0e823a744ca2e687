//! Where projections run: worker processes (`results::project::worker`), kept between
//! calls so that a call pays for a round trip on a pipe, not for starting a process.
//!
//! A call waits for one of a running permit per core (so a burst of calls runs that many
//! programs at a time, not a process per call), takes an idle worker (one found dead is
//! replaced by a new one, once), or starts one; sends the program and the JSON; and waits
//! for the answer until [`DEADLINE`], reading no more than the tool may return. A worker that answers goes back to the idle ones
//! (at most one per core stay); one that misses its deadline, dies (an allocation past its
//! memory limit, a recursion past its stack) or garbles its answer is killed and never
//! used again, so one program's failure costs no other call anything. Workers start as
//! this server's own binary, with no environment and no stderr, through [`Processes`], so a
//! sweep never takes one for an escaped process; they end with the server (their stdin
//! closes; they are killed when dropped).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::processes::Processes;
use crate::results::project::{Program, worker};

/// How long one projection may take.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// The longest reason for a failure a worker may send back.
const MAX_REASON: usize = 64 * 1024;

/// The server's binary, as it was started (an upgrade on disk changes nothing here).
const SELF_EXE: &str = "/proc/self/exe";

/// Why a projection gave no value; `Display` is the tool error's text.
#[derive(Debug, thiserror::Error)]
pub enum ProjectionError {
    /// The program ran and said why (it failed, gave no value or several).
    #[error("{0}")]
    Program(String),
    #[error("the projection took longer than {}s and was stopped", DEADLINE.as_secs())]
    Deadline,
    #[error(
        "the projection was stopped: it needed more than {} MiB of memory or recursed too deep",
        worker::MEMORY_LIMIT >> 20
    )]
    Died,
    #[error(
        "the projection's value is {size} bytes, more than the {limit} this tool may return \
         (`max-output`, or `max-response`)"
    )]
    TooLarge { size: usize, limit: usize },
    #[error("could not start a worker for the projection: {0}")]
    Start(#[source] std::io::Error),
    #[error("the projection's worker failed: {0}")]
    Io(#[source] std::io::Error),
}

/// The server's projection workers.
#[derive(Debug)]
pub struct Projector {
    processes: Arc<Processes>,
    idle: Mutex<Vec<Worker>>,
    /// Workers kept idle, and workers running at once: one per core.
    keep: usize,
    /// A permit per running worker: a burst of calls runs `keep` programs at a time, never
    /// one process (and up to its memory limit) per call.
    running: tokio::sync::Semaphore,
}

#[derive(Debug)]
struct Worker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    pid: u32,
    processes: Arc<Processes>,
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Killed and reaped by tokio (`kill_on_drop`); it is no leader of ours any more.
        let _ = self.child.start_kill();
        self.processes.forget_leader(self.pid);
    }
}

impl Projector {
    pub fn new(processes: Arc<Processes>) -> Self {
        let keep = std::thread::available_parallelism()
            .map_or(2, std::num::NonZero::get)
            .max(2);
        Self {
            processes,
            idle: Mutex::new(Vec::new()),
            keep,
            running: tokio::sync::Semaphore::new(keep),
        }
    }

    /// Runs `program` on the JSON text `input`: the JSON text of its one value.
    /// Its value may be at most `limit` bytes (the tool's own output limit). It waits for
    /// one of the running permits first; the deadline starts when it runs. A kept worker
    /// that turns out dead (killed between calls) is replaced once by a new one; a new
    /// worker's death is the program's.
    pub async fn project(
        &self,
        program: &Program,
        input: &[u8],
        limit: usize,
    ) -> Result<Vec<u8>, ProjectionError> {
        // Never closed: the semaphore lives as long as the projector.
        let _running = self.running.acquire().await.ok();
        if let Some(worker) = self.take() {
            match self.run(worker, program, input, limit).await {
                Err(ProjectionError::Died) => {}
                done => return done,
            }
        }
        self.run(self.start()?, program, input, limit).await
    }

    async fn run(
        &self,
        mut worker: Worker,
        program: &Program,
        input: &[u8],
        limit: usize,
    ) -> Result<Vec<u8>, ProjectionError> {
        let answer =
            tokio::time::timeout(DEADLINE, worker.exchange(program.code(), input, limit)).await;
        let error = match answer {
            Ok(Ok(answer)) => {
                self.give_back(worker);
                return answer.map_err(ProjectionError::Program);
            }
            Ok(Err(error)) => error,
            Err(_elapsed) => ProjectionError::Deadline,
        };
        // Gone before the permit is given back: never more workers alive than permits.
        let _ = worker.child.kill().await;
        Err(error)
    }

    /// An idle worker that is still alive (one killed while idle is dropped here, not
    /// found dead by the call that takes it).
    fn take(&self) -> Option<Worker> {
        let mut idle = self.idle.lock().ok()?;
        while let Some(mut worker) = idle.pop() {
            if matches!(worker.child.try_wait(), Ok(None)) {
                return Some(worker);
            }
        }
        None
    }

    fn give_back(&self, worker: Worker) {
        if let Ok(mut idle) = self.idle.lock()
            && idle.len() < self.keep
        {
            idle.push(worker);
        }
    }

    fn start(&self) -> Result<Worker, ProjectionError> {
        let mut command = Command::new(SELF_EXE);
        command
            .arg(worker::ARGUMENT)
            .env_clear()
            .current_dir("/")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let mut child = self
            .processes
            .spawn(&mut command)
            .map_err(ProjectionError::Start)?;
        let pid = child.id().unwrap_or_default();
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(ProjectionError::Start(
                std::io::ErrorKind::BrokenPipe.into(),
            ));
        };
        Ok(Worker {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            pid,
            processes: self.processes.clone(),
        })
    }
}

impl Worker {
    /// One request and its answer: the value, or the program's reason.
    async fn exchange(
        &mut self,
        program: &str,
        input: &[u8],
        limit: usize,
    ) -> Result<Result<Vec<u8>, String>, ProjectionError> {
        let mut request = Vec::with_capacity(8 + program.len() + input.len());
        worker::write_frame(&mut request, program.as_bytes()).map_err(ProjectionError::Io)?;
        worker::write_frame(&mut request, input).map_err(ProjectionError::Io)?;
        let died = |error: std::io::Error| match error.kind() {
            std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::UnexpectedEof => {
                ProjectionError::Died
            }
            _ => ProjectionError::Io(error),
        };
        self.stdin.write_all(&request).await.map_err(died)?;
        self.stdin.flush().await.map_err(died)?;
        let status = self.stdout.read_u8().await.map_err(died)?;
        let length = self.stdout.read_u32_le().await.map_err(died)? as usize;
        // Refused before it is read: the worker, with the rest unread, is not used again.
        if status == worker::OK && length > limit {
            return Err(ProjectionError::TooLarge {
                size: length,
                limit,
            });
        }
        // A reason is cut to what a person reads.
        if status != worker::OK && length > MAX_REASON {
            return Err(ProjectionError::Program(
                "the projection failed, and its reason is too long to show".to_owned(),
            ));
        }
        let mut bytes = vec![0; length];
        self.stdout.read_exact(&mut bytes).await.map_err(died)?;
        Ok(match status {
            worker::OK => Ok(bytes),
            _ => Err(String::from_utf8_lossy(&bytes).into_owned()),
        })
    }
}
