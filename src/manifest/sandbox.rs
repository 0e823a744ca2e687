//! `[server.sandbox]` and `[tools.sandbox]`: paths resolved and required to exist, the
//! network and the limits parsed, and a tool's sandbox kept within the server's (a tool
//! inherits what it leaves out, and may only narrow what it sets).

use std::ffi::OsString;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::Checker;
use super::wire::SandboxWire;
use crate::backend::command::{CommandBackend, InheritEnv, Program};
use crate::egress::{Allowance, Host, Rule};
use crate::sandbox::shims::{self, Launch};
use crate::sandbox::{
    Endpoint, Limits, Network, SYSTEM_EXECUTE, SYSTEM_READ, SYSTEM_WRITE, Sandbox,
};
use crate::template::{ArgvElement, Repeated};
use crate::units::{parse_duration, parse_size};

const TEMP_DIR: &str = "{temp-dir}";

/// A path and where the manifest wrote it.
type Located = (PathBuf, Range<usize>);
const OUTPUT_DIR: &str = "{output-dir}";

/// A checked sandbox and where `required = true` was written (for the refusal).
#[derive(Debug, Clone)]
pub(super) struct Declared {
    pub(super) sandbox: Sandbox,
    pub(super) required_at: Option<Range<usize>>,
}

/// Checks a sandbox table; `parent` is the server's, which a tool's may only narrow.
pub(super) fn build_sandbox(
    wire: &Spanned<SandboxWire>,
    parent: Option<&Declared>,
    checker: &mut Checker,
) -> Option<Declared> {
    let errors_before = checker.diagnostics.len();
    let span = wire.span();
    let wire = wire.get_ref();
    let inherited = parent.map(|parent| &parent.sandbox);
    let system = flag(wire.system.as_ref(), inherited.map(|s| s.system), true);
    if let (Some(false), Some(true), Some(at)) = (
        inherited.map(|s| s.system),
        Some(system),
        wire.system.as_ref(),
    ) {
        checker.error(
            "`system = true` widens the server's sandbox, which has `system = false`",
            at.span(),
        );
    }
    let shims = flag(wire.shims.as_ref(), inherited.map(|s| s.shims), true);
    if let (Some(false), true, Some(at)) = (inherited.map(|s| s.shims), shims, wire.shims.as_ref())
    {
        checker.error(
            "`shims = true` widens the server's sandbox, which has `shims = false`",
            at.span(),
        );
    }
    let mut temp_dir = inherited.is_some_and(|s| s.temp_dir);
    let read = paths(wire.read.as_ref(), "read", &mut temp_dir, checker);
    let write = paths(wire.write.as_ref(), "write", &mut temp_dir, checker);
    let execute = paths(wire.execute.as_ref(), "execute", &mut temp_dir, checker);
    if let Some(parent) = inherited {
        narrow_paths(parent, [&read, &write, &execute], checker);
    }
    let network = network(wire, inherited, checker);
    let limits = limits(wire, inherited, checker);
    let seccomp = flag(wire.seccomp.as_ref(), inherited.map(|s| s.seccomp), true);
    if let (Some(true), Some(at)) = (inherited.map(|s| s.seccomp), &wire.seccomp)
        && !seccomp
    {
        checker.error(
            "`seccomp = false` widens the server's sandbox, which filters system calls",
            at.span(),
        );
    }
    let required = flag(wire.required.as_ref(), inherited.map(|s| s.required), false);
    if let (Some(true), Some(at)) = (inherited.map(|s| s.required), &wire.required)
        && !required
    {
        checker.error(
            "`required = false` widens the server's sandbox, which is required",
            at.span(),
        );
    }
    if checker.diagnostics.len() > errors_before {
        return None;
    }
    let kernel = checker.kernel();
    let own = |list: Option<Vec<(PathBuf, Range<usize>)>>, from: fn(&Sandbox) -> &Vec<PathBuf>| {
        list.map_or_else(
            || inherited.map(|s| from(s).clone()).unwrap_or_default(),
            |list| list.into_iter().map(|(path, _)| path).collect(),
        )
    };
    let required_at = wire
        .required
        .as_ref()
        .filter(|at| *at.get_ref())
        .map(Spanned::span)
        .or_else(|| parent.and_then(|parent| parent.required_at.clone()))
        .or_else(|| required.then_some(span.start..span.start + 1));
    Some(Declared {
        sandbox: Sandbox {
            read: own(read, |s| &s.read),
            write: own(write, |s| &s.write),
            execute: own(execute, |s| &s.execute),
            program: None,
            shims,
            launch: Launch::default(),
            system,
            temp_dir,
            network,
            limits,
            seccomp,
            required,
            kernel,
            filters: std::sync::Arc::default(),
        },
        required_at,
    })
}

/// Completes a tool's sandbox with its program, and refuses it when it is required and this
/// kernel cannot enforce all of it.
pub(super) fn attach(declared: Declared, command: &mut CommandBackend, checker: &mut Checker) {
    let Declared {
        mut sandbox,
        required_at,
    } = declared;
    let context = launch_context(command);
    if let Some(found) = program_found(command, &context) {
        sandbox.program = std::fs::canonicalize(&found).ok();
        let key = (found.clone(), command.cwd.clone());
        sandbox.launch = checker
            .launches
            .entry(key)
            .or_insert_with(|| shims::follow(&found, &context))
            .clone();
    }
    if let Err(problem) = sandbox.compile_filters() {
        checker.error(
            format!("the sandbox's seccomp filter cannot be built here: {problem}"),
            required_at.clone().unwrap_or(0..1),
        );
    }
    if sandbox.required {
        let missing = sandbox.enforcement().missing;
        if !missing.is_empty() {
            let at = required_at.unwrap_or(0..1);
            checker
                .error(
                    format!(
                        "the sandbox is required, but this kernel cannot enforce: {} ({})",
                        missing.join("; "),
                        sandbox.kernel.summary()
                    ),
                    at,
                )
                .hint("drop what the kernel lacks, or `required = false` to run with what it has (the server logs what is not enforced)");
        }
    }
    command.sandbox = Some(Box::new(sandbox));
}

fn flag(value: Option<&Spanned<bool>>, inherited: Option<bool>, default: bool) -> bool {
    value
        .map(|value| *value.get_ref())
        .or(inherited)
        .unwrap_or(default)
}

/// A list's paths, resolved against the manifest's folder; `None` when the key is absent.
fn paths(
    list: Option<&Spanned<Vec<Spanned<String>>>>,
    key: &str,
    temp_dir: &mut bool,
    checker: &mut Checker,
) -> Option<Vec<(PathBuf, Range<usize>)>> {
    let list = list?;
    let mut out = Vec::new();
    for entry in list.get_ref() {
        let text = entry.get_ref().as_str();
        match text {
            TEMP_DIR | OUTPUT_DIR if key == "write" => {
                *temp_dir |= text == TEMP_DIR;
                continue;
            }
            _ if text.contains('{') => {
                checker
                    .error(
                        format!("`{text}`: sandbox paths are fixed at load"),
                        entry.span(),
                    )
                    .hint("arguments never choose what a sandbox allows; `write` may list `{temp-dir}` (a private directory per call) and `{output-dir}`; `~/` is your home");
                continue;
            }
            _ => {}
        }
        let resolved = match (text.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => Path::new(&home).join(rest),
            _ => checker.refer(
                text,
                if key == "write" {
                    super::Use::SandboxWrite
                } else {
                    super::Use::Sandbox
                },
            ),
        };
        match std::fs::canonicalize(&resolved) {
            Ok(path) => out.push((path, entry.span())),
            Err(error) => {
                let base = checker.base_dir.display().to_string();
                checker
                    .error(
                        format!("`{text}` cannot be sandboxed: {error}"),
                        entry.span(),
                    )
                    .hint(format!(
                        "sandbox paths must exist when the server starts; relative paths resolve against `{base}`"
                    ));
            }
        }
    }
    Some(out)
}

/// Each of a tool's `read`, `write` and `execute` paths must lie beneath the server's.
fn narrow_paths(
    parent: &Sandbox,
    [read, write, execute]: [&Option<Vec<Located>>; 3],
    checker: &mut Checker,
) {
    let with_system = |own: &[PathBuf], system: &[&str]| {
        let mut all = own.to_vec();
        if parent.system {
            all.extend(system.iter().map(PathBuf::from));
        }
        all
    };
    let readable = [
        with_system(&parent.read, SYSTEM_READ),
        with_system(&parent.write, SYSTEM_WRITE),
        with_system(&parent.execute, SYSTEM_EXECUTE),
    ]
    .concat();
    narrow(read.as_ref(), "read", &readable, checker);
    narrow(
        write.as_ref(),
        "write",
        &with_system(&parent.write, SYSTEM_WRITE),
        checker,
    );
    narrow(
        execute.as_ref(),
        "execute",
        &with_system(&parent.execute, SYSTEM_EXECUTE),
        checker,
    );
}

/// A tool's paths must lie beneath the server's.
fn narrow(
    list: Option<&Vec<(PathBuf, Range<usize>)>>,
    key: &str,
    allowed: &[PathBuf],
    checker: &mut Checker,
) {
    for (path, span) in list.into_iter().flatten() {
        if !allowed.iter().any(|parent| path.starts_with(parent)) {
            checker
                .error(
                    format!(
                        "`{}` is outside the server's sandbox, which lets tools {key} only beneath: {}",
                        path.display(),
                        if allowed.is_empty() {
                            "nothing".to_owned()
                        } else {
                            allowed
                                .iter()
                                .map(|p| p.display().to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        }
                    ),
                    span.clone(),
                )
                .hint("a tool's `[tools.sandbox]` may only narrow `[server.sandbox]`");
        }
    }
}

fn network(wire: &SandboxWire, parent: Option<&Sandbox>, checker: &mut Checker) -> Network {
    let Some(value) = &wire.network else {
        return parent.map_or(Network::Any, |parent| parent.network.clone());
    };
    let span = value.span();
    let network = match value.get_ref() {
        toml::Value::Boolean(true) => Network::Any,
        toml::Value::Boolean(false) => Network::Nothing,
        toml::Value::Array(items) if !items.is_empty() => {
            let mut rules = Vec::new();
            let mut wrong = false;
            for item in items {
                match endpoint(item) {
                    Ok(rule) => rules.push(rule),
                    Err(problem) => {
                        checker.error(format!("`network`: {problem}"), span.clone());
                        wrong = true;
                    }
                }
            }
            if wrong {
                // Said once: not also as a list that widens the server's.
                return Network::Nothing;
            }
            if rules.iter().any(|rule| rule.host.is_name()) {
                Network::Hosts(std::sync::Arc::new(Allowance { rules }))
            } else {
                Network::Ports(
                    rules
                        .into_iter()
                        .map(|rule| Endpoint {
                            host: rule.host.to_string(),
                            port: rule.port,
                        })
                        .collect(),
                )
            }
        }
        _ => {
            checker
                .error(
                    "`network` is `false`, `true`, or a list of \"host:port\"",
                    span,
                )
                .hint("for example: network = [\"api.example.com:443\"]");
            return Network::Nothing;
        }
    };
    let widens = match (parent.map(|p| &p.network), &network) {
        (None | Some(Network::Any), _) | (Some(_), Network::Nothing) => false,
        (Some(Network::Nothing), _)
        | (Some(Network::Ports(_) | Network::Hosts(_)), Network::Any)
        | (Some(Network::Hosts(_)), Network::Ports(_)) => true,
        (Some(Network::Ports(allowed)), Network::Ports(wanted)) => wanted
            .iter()
            .any(|want| !allowed.iter().any(|have| have.port == want.port)),
        // Through the proxy to ports the server lets any host be reached on: narrower.
        (Some(Network::Ports(allowed)), Network::Hosts(wanted)) => wanted
            .rules
            .iter()
            .any(|want| !allowed.iter().any(|have| have.port == want.port)),
        (Some(Network::Hosts(allowed)), Network::Hosts(wanted)) => !allowed.covers(wanted),
    };
    if widens {
        checker
            .error("`network` widens the server's sandbox", value.span())
            .hint("a tool's `[tools.sandbox]` may only narrow `[server.sandbox]`");
    }
    network
}

/// `"host:port"`, `"*.host:port"`, `"[::1]:8080"`, `"*:443"`, or a port number.
fn endpoint(item: &toml::Value) -> Result<Rule, String> {
    let (host, port) = match item {
        toml::Value::Integer(port) => ("*".to_owned(), *port),
        toml::Value::String(text) => {
            let (host, port) = text
                .rsplit_once(':')
                .ok_or_else(|| format!("`{text}` is not \"host:port\""))?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if host.is_empty() {
                return Err(format!("`{text}` has no host (write \"*:port\" for any)"));
            }
            let port = port
                .parse::<i64>()
                .map_err(|_| format!("`{text}` has no port number"))?;
            (host.to_owned(), port)
        }
        _ => return Err("each entry is \"host:port\" or a port number".into()),
    };
    let port = u16::try_from(port)
        .ok()
        .filter(|port| *port > 0)
        .ok_or_else(|| format!("{port} is not a TCP port"))?;
    let host = Host::parse(&host).ok_or_else(|| {
        format!("`{host}` is not a host name, `*.` and a name, `*`, or an IP address")
    })?;
    Ok(Rule { host, port })
}

fn limits(wire: &SandboxWire, parent: Option<&Sandbox>, checker: &mut Checker) -> Limits {
    let inherited = parent.map(|p| p.limits).unwrap_or_default();
    let size = |value: &Option<Spanned<toml::Value>>, key: &str, checker: &mut Checker| {
        value.as_ref().and_then(|value| {
            match parse_size(value.get_ref()).map(|bytes| bytes as u64) {
                Ok(bytes) if bytes >= 1 << 20 => Some((bytes, value.span())),
                Ok(_) => {
                    checker.error(format!("`{key}` must be at least 1 MiB"), value.span());
                    None
                }
                Err(problem) => {
                    checker.error(format!("invalid `{key}`: {problem}"), value.span());
                    None
                }
            }
        })
    };
    let count = |value: &Option<Spanned<i64>>, key: &str, least: i64, checker: &mut Checker| {
        value.as_ref().and_then(|value| {
            let n = *value.get_ref();
            if n < least {
                checker.error(format!("`{key}` must be at least {least}"), value.span());
                None
            } else {
                Some((n.unsigned_abs(), value.span()))
            }
        })
    };
    let cpu = wire.cpu.as_ref().and_then(|value| {
        parse_duration(value.get_ref())
            .map(|duration| {
                (
                    duration.as_secs() + u64::from(duration.subsec_nanos() > 0),
                    value.span(),
                )
            })
            .map_err(|problem| checker.error(format!("invalid `cpu`: {problem}"), value.span()))
            .ok()
    });
    let memory = size(&wire.memory, "memory", checker);
    let file_size = size(&wire.file_size, "file-size", checker);
    let processes = count(&wire.processes, "processes", 1, checker);
    let open_files = count(&wire.open_files, "open-files", 8, checker);
    let mut pick =
        |own: Option<(u64, Range<usize>)>, parent: Option<u64>, key: &str| match (own, parent) {
            (Some((value, span)), Some(most)) if value > most => {
                checker
                    .error(
                        format!("`{key}` widens the server's sandbox, whose limit is {most}"),
                        span,
                    )
                    .hint("a tool's `[tools.sandbox]` may only narrow `[server.sandbox]`");
                Some(most)
            }
            (Some((value, _)), _) => Some(value),
            (None, parent) => parent,
        };
    Limits {
        memory: pick(memory, inherited.memory, "memory"),
        cpu: pick(cpu, inherited.cpu, "cpu"),
        processes: pick(processes, inherited.processes, "processes"),
        file_size: pick(file_size, inherited.file_size, "file-size"),
        open_files: pick(open_files, inherited.open_files, "open-files"),
    }
}

/// The file the command executes first, found the way `exec` finds it (on the command's
/// `PATH`, symlinks not yet resolved: a shim is known by where it lies); `None` when it
/// cannot be found now (starting it will fail with a clear error).
fn program_found(command: &CommandBackend, context: &shims::Context) -> Option<PathBuf> {
    let name = match &command.program {
        Program::Argv(elements) => match elements.first()? {
            ArgvElement::Single(Repeated { templates, .. }) => match templates.as_slice() {
                [template] => template.as_literal()?,
                _ => return None,
            },
            ArgvElement::Group(_) | ArgvElement::Flag { .. } => return None,
        },
        Program::Script { shell, .. } => shell.clone(),
    };
    context.which(&name).filter(|path| path.is_file())
}

/// The variables a version manager reads to pick a version; no others reach it.
fn for_managers(name: &str) -> bool {
    ["HOME", "USER", "LOGNAME", "LANG"].contains(&name)
        || ["XDG_", "PYENV", "RBENV_", "ASDF_", "MISE_", "NVM_"]
            .iter()
            .any(|prefix| name.starts_with(prefix))
}

/// Where and with what `PATH` and version variables the command will run, for following
/// its program: what it inherits, then what the tool sets to fixed values.
fn launch_context(command: &CommandBackend) -> shims::Context {
    let inherited = |name: &str| match &command.inherit_env {
        InheritEnv::All => true,
        InheritEnv::Nothing => false,
        InheritEnv::Only(names) => names.iter().any(|kept| kept == name),
    };
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os()
        .filter(|(name, _)| {
            name.to_str()
                .is_some_and(|name| (for_managers(name) || name == "PATH") && inherited(name))
        })
        .collect();
    for (name, template) in &command.env {
        if let Some(value) = template.as_literal() {
            env.retain(|(key, _)| key != name.as_str());
            env.push((name.into(), value.into()));
        }
    }
    let path = env
        .iter()
        .position(|(name, _)| name == "PATH")
        .map(|at| env.remove(at).1);
    env.retain(|(name, _)| name.to_str().is_some_and(for_managers));
    shims::Context {
        path,
        cwd: command.cwd.clone(),
        env,
    }
}
