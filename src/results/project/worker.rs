//! The process a projection runs in: the server's binary started with [`ARGUMENT`], which
//! `main` hands here before it parses a command line.
//!
//! It bounds itself before it reads anything: [`MEMORY_LIMIT`] of address space (an
//! allocation past it ends the process), no core file, few descriptors, not dumpable, and
//! killed when the server's thread that started it ends. The server gives it no
//! environment and no stderr, so `env` reads nothing and `debug` writes nowhere; it kills
//! the worker at its deadline. Then it answers requests on stdin, one at a time, until
//! stdin closes, compiling each program once.
//!
//! The frames, little-endian lengths:
//! - request: `u32` program length, program, `u32` input length, input (JSON);
//! - answer: one status byte ([`OK`] or [`FAILED`]), `u32` length, then the value (JSON) or
//!   the reason.

use std::collections::HashMap;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::process::ExitCode;

use super::{Filter, compile, run};

/// What the server passes as the first argument to start a worker.
pub const ARGUMENT: &str = "__project";

/// The address space a worker may use.
pub const MEMORY_LIMIT: u64 = 1 << 30;

/// An answer's status: a value follows.
pub const OK: u8 = 0;
/// An answer's status: a reason follows.
pub const FAILED: u8 = 1;

/// Programs a worker keeps compiled; past this it forgets them all (a manifest with more
/// projections than this compiles again, nothing more).
const KEPT_PROGRAMS: usize = 256;

/// Runs the worker when this process was started as one.
pub fn if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != ARGUMENT || args.next().is_some() {
        return None;
    }
    bound_self();
    // A stack for any program the server's check let through (`super::STACK`); what a
    // program recurses into past it ends this process, never the server.
    let served = std::thread::Builder::new()
        .name("project".into())
        .stack_size(super::STACK)
        .spawn(|| serve(io::stdin().lock(), io::stdout().lock()));
    Some(match served.map(std::thread::JoinHandle::join) {
        Ok(Ok(Ok(()))) => ExitCode::SUCCESS,
        _ => ExitCode::FAILURE,
    })
}

/// The limits a worker puts on itself before it reads anything.
fn bound_self() {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_AS, MEMORY_LIMIT, MEMORY_LIMIT);
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    let _ = setrlimit(Resource::RLIMIT_NOFILE, 16, 16);
    let _ = nix::sys::prctl::set_dumpable(false);
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
}

/// Answers requests until `input` ends.
fn serve(input: impl Read, output: impl Write) -> io::Result<()> {
    let mut input = BufReader::new(input);
    let mut output = BufWriter::new(output);
    let mut programs: HashMap<Vec<u8>, Result<Filter, String>> = HashMap::new();
    loop {
        let Some(program) = read_frame(&mut input)? else {
            return Ok(());
        };
        let json = read_frame(&mut input)?.ok_or(io::ErrorKind::UnexpectedEof)?;
        if programs.len() >= KEPT_PROGRAMS && !programs.contains_key(&program) {
            programs.clear();
        }
        let filter = programs.entry(program).or_insert_with_key(|program| {
            let code = String::from_utf8_lossy(program);
            compile(&code).map_err(|errors| {
                errors.first().map_or_else(
                    || "the projection does not compile".to_owned(),
                    |error| format!("the projection does not compile: {}", error.message),
                )
            })
        });
        let answer = match filter {
            Ok(filter) => run(filter, &json),
            Err(reason) => Err(reason.clone()),
        };
        let (status, bytes) = match &answer {
            Ok(value) => (OK, value.as_slice()),
            Err(reason) => (FAILED, reason.as_bytes()),
        };
        output.write_all(&[status])?;
        write_frame(&mut output, bytes)?;
        output.flush()?;
    }
}

/// One length-prefixed frame; `None` when the input ends before it starts.
fn read_frame(input: &mut impl Read) -> io::Result<Option<Vec<u8>>> {
    let mut length = [0_u8; 4];
    match input.read_exact(&mut length) {
        Ok(()) => {}
        Err(error) if error.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(error) => return Err(error),
    }
    let length = usize::try_from(u32::from_le_bytes(length)).map_err(io::Error::other)?;
    let mut bytes = Vec::new();
    input.take(length as u64).read_to_end(&mut bytes)?;
    if bytes.len() < length {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(Some(bytes))
}

/// Writes `bytes` as one length-prefixed frame.
pub fn write_frame(output: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    let length = u32::try_from(bytes.len()).map_err(io::Error::other)?;
    output.write_all(&length.to_le_bytes())?;
    output.write_all(bytes)
}

#[cfg(test)]
mod tests {
    use super::{FAILED, OK, serve, write_frame};

    fn request(program: &str, input: &str) -> Vec<u8> {
        let mut bytes = Vec::new();
        write_frame(&mut bytes, program.as_bytes()).expect("program");
        write_frame(&mut bytes, input.as_bytes()).expect("input");
        bytes
    }

    fn answers(mut bytes: &[u8]) -> Vec<(u8, String)> {
        let mut out = Vec::new();
        while let Some((&status, rest)) = bytes.split_first() {
            let (length, rest) = rest.split_at(4);
            let length = u32::from_le_bytes(length.try_into().expect("four bytes")) as usize;
            out.push((
                status,
                String::from_utf8_lossy(&rest[..length]).into_owned(),
            ));
            bytes = &rest[length..];
        }
        out
    }

    #[test]
    fn a_worker_answers_each_request_in_turn_until_its_input_ends() {
        let mut input = request("{a}", r#"{"a":1,"b":2}"#);
        input.extend(request(".[", "1"));
        input.extend(request("{a}", r#"{"a":[true]}"#));
        input.extend(request("error(\"no\")", "1"));
        let mut output = Vec::new();
        serve(input.as_slice(), &mut output).expect("served");
        let answers = answers(&output);
        assert_eq!(answers.len(), 4);
        assert_eq!(answers[0], (OK, r#"{"a":1}"#.to_owned()));
        assert_eq!(answers[1].0, FAILED);
        assert!(answers[1].1.starts_with("the projection does not compile"));
        assert_eq!(answers[2], (OK, r#"{"a":[true]}"#.to_owned()));
        assert_eq!(answers[3].0, FAILED);
        assert!(answers[3].1.contains("no"), "{}", answers[3].1);
    }

    #[test]
    fn a_request_cut_short_ends_the_worker_with_an_error() {
        let input = request("{a}", "{}");
        let mut output = Vec::new();
        assert!(serve(&input[..input.len() - 1], &mut output).is_err());
        assert!(output.is_empty());
    }
}
