//! A build without a default feature (`cargo test --no-default-features`): each option that
//! needs a feature left out fails at start, saying which feature, instead of being unknown
//! or silently ignored. The default build runs the features' own tests instead.

#[cfg(not(all(feature = "redis", feature = "otlp", feature = "openapi")))]
use crate::harness::{Workspace, run};

#[cfg(not(all(feature = "redis", feature = "otlp", feature = "openapi")))]
const MANIFEST: &str = r#"
[[tools]]
name = "plain"
[tools.static]
content = [{ type = "text", text = "ok" }]
"#;

#[cfg(not(feature = "redis"))]
#[test]
fn without_redis_a_redis_task_store_is_refused_by_name() {
    let workspace = Workspace::new(MANIFEST);
    let (code, _, err) = run(
        &["tasks", "--task-store", "redis://127.0.0.1:9/0", "list"],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("cargo feature `redis`"), "{err}");
    // The embedded store is built in either way.
    let (code, _, err) = run(&["tasks", "list"], workspace.dir.path());
    assert_eq!(code, 0, "{err}");
}

#[cfg(not(feature = "otlp"))]
#[test]
fn without_otlp_an_endpoint_is_refused_by_name() {
    let workspace = Workspace::new(MANIFEST);
    let (code, _, err) = run(
        &[
            "--config",
            "tools.toml",
            "--otlp-endpoint",
            "http://127.0.0.1:9",
        ],
        workspace.dir.path(),
    );
    assert_ne!(code, 0);
    assert!(err.contains("cargo feature `otlp`"), "{err}");
}

#[cfg(not(feature = "openapi"))]
#[test]
fn without_openapi_the_importer_is_refused_by_name() {
    let workspace = Workspace::new(MANIFEST);
    std::fs::write(workspace.path("api.json"), "{}").expect("write");
    let (code, _, err) = run(&["import", "openapi", "api.json"], workspace.dir.path());
    assert_eq!(code, 2);
    assert!(err.contains("cargo feature `openapi`"), "{err}");
}
