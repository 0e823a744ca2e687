//! What a sandboxed command starts as: `mcp-serve-sandbox`, the trampoline on its own, when
//! it is installed beside the server's binary (it starts in a fraction of the time the
//! server's 20 MB binary takes), else the server's binary itself (`/proc/self/exe`).
//!
//! The small binary is opened once, at first use, and each command starts it through that
//! descriptor (`/proc/self/fd/N`), so replacing the file on disk afterwards, as an upgrade
//! does, changes nothing for this server, as with `/proc/self/exe`.

use std::os::fd::{AsRawFd as _, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use nix::fcntl::{OFlag, open};
use nix::sys::stat::Mode;

/// The small binary's name.
pub const NAME: &str = "mcp-serve-sandbox";

/// The server's own binary, started with [`super::TRAMPOLINE`] when there is no small one.
const SELF_EXE: &str = "/proc/self/exe";

/// How sandboxed commands start in this process.
#[derive(Debug)]
pub struct Launcher {
    /// What to `exec`.
    pub program: PathBuf,
    /// Where the small binary was found; `None` for the server's own.
    pub found: Option<PathBuf>,
    /// Keeps `/proc/self/fd/N` valid.
    _opened: Option<OwnedFd>,
}

/// The launcher, looked up once.
pub fn launcher() -> &'static Launcher {
    static LAUNCHER: OnceLock<Launcher> = OnceLock::new();
    LAUNCHER.get_or_init(|| {
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| Some(exe.parent()?.join(NAME)));
        beside
            .and_then(|path| {
                let fd = open(&path, OFlag::O_PATH | OFlag::O_CLOEXEC, Mode::empty()).ok()?;
                let meta = std::fs::metadata(&path).ok()?;
                meta.is_file().then(|| Launcher {
                    program: PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())),
                    found: Some(path),
                    _opened: Some(fd),
                })
            })
            .unwrap_or_else(|| Launcher {
                program: PathBuf::from(SELF_EXE),
                found: None,
                _opened: None,
            })
    })
}

impl Launcher {
    /// For `check` and the log.
    pub fn describe(&self) -> String {
        self.found.as_deref().map_or_else(
            || format!("the server's own binary ({NAME} is not installed beside it)"),
            |path: &Path| path.display().to_string(),
        )
    }
}
