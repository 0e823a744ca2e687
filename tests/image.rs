//! The container image `scripts/image` builds from no base image serves the example over
//! HTTP from inside podman (Debian's) to the official Python client, its command tools
//! sandboxed in the container.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::harness::{BINARY, repo_root};
use crate::interop::assert_python_report;

/// podman, or `None` where it is missing and cannot be installed (not root: scripts/test
/// installs it as root, and there a missing podman fails the test).
fn podman() -> Option<Command> {
    let found = Command::new("podman")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if !found {
        assert!(
            !nix::unistd::Uid::effective().is_root(),
            "podman is missing; scripts/test installs it (apt install podman runc busybox-static)"
        );
        eprintln!("SKIPPED: podman is not installed (scripts/test installs it as root)");
        return None;
    }
    let mut podman = Command::new("podman");
    // runc works with cgroups v1, v2 and both mixed; crun, podman's default, refuses the last.
    if Command::new("runc")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success())
    {
        podman.args(["--runtime", "runc"]);
    }
    Some(podman)
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("run");
    assert!(
        output.status.success(),
        "{command:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Removes the container and the image however the test ends.
struct Cleanup {
    container: String,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(mut podman) = podman() {
            let _ = podman.args(["rm", "--force", &self.container]).output();
        }
        if let Some(mut podman) = podman() {
            let _ = podman.args(["rmi", "--force", &self.image]).output();
        }
    }
}

#[test]
fn the_image_serves_the_example_from_inside_podman() {
    let Some(_) = podman() else { return };
    let tag = format!("mcp-serve-test-{}", std::process::id());
    let image = format!("localhost/{tag}:latest");
    let container = format!("{tag}-server");
    let _cleanup = Cleanup {
        container: container.clone(),
        image: image.clone(),
    };
    run(Command::new(repo_root().join("scripts/image"))
        .args(["--binary", BINARY, "--tag", &image, "--engine", "podman"]));
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let address = format!("127.0.0.1:{port}");
    let mut start = podman().expect("podman");
    run(start
        .args(["run", "--detach", "--name", &container, "--network", "host"])
        // Within this process's own limits: podman's defaults may be above them.
        .args([
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=1024:1024",
        ])
        .arg(&image)
        .args([
            "--config",
            "/srv/tools.toml",
            "--http",
            &address,
            "--sessions",
        ]));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let logs = podman()
            .expect("podman")
            .args(["logs", &container])
            .output()
            .expect("podman logs");
        if String::from_utf8_lossy(&logs.stderr).contains("listening on") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the container did not start: {}",
            String::from_utf8_lossy(&logs.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let python = repo_root().join("tests/interop/.venv/bin/python");
    let report = run(Command::new(python)
        .arg(repo_root().join("tests/interop/client.py"))
        .args(["legacy", "http", &format!("http://{address}/mcp")])
        .current_dir("/"));
    let report: serde_json::Value = serde_json::from_str(&report).expect("a JSON report");
    assert!(report.get("failure").is_none(), "{}", report["failure"]);
    assert_python_report(&report, "2025-11-25");
    // The tools ran in the container, sandboxed: `check` there says what it enforces.
    let checked = podman()
        .expect("podman")
        .args([
            "exec",
            &container,
            "/usr/local/bin/mcp-serve",
            "check",
            "--config",
        ])
        .arg("/srv/tools.toml")
        .output()
        .expect("check");
    let checked = String::from_utf8_lossy(&checked.stdout).into_owned()
        + &String::from_utf8_lossy(&checked.stderr);
    assert!(
        checked.contains("enforced: files: read /srv/examples"),
        "{checked}"
    );
    assert!(checked.contains("0 errors"), "{checked}");
    assert!(checked.contains("enforced: metadata"), "{checked}");
    assert!(!checked.contains("not enforced"), "{checked}");
    // And the server is no root there.
    let uid = run(podman()
        .expect("podman")
        .args(["exec", &container, "/bin/id", "-u"]));
    assert_eq!(uid.trim(), "10001");
}
