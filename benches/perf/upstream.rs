//! A small keep-alive HTTP upstream on 127.0.0.1 for the HTTP-backed tool, on a thread and
//! runtime of its own.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// Starts the upstream and returns its base URL. It runs until the process exits. It is
/// also the auth rows' issuer: its metadata names `/jwks`, which serves `jwks`.
pub(crate) fn start(jwks: String, issues: String) -> anyhow::Result<String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let address: SocketAddr = listener.local_addr()?;
    std::thread::Builder::new()
        .name("upstream".into())
        .spawn(move || {
            match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => {
                    runtime.block_on(serve(
                        listener,
                        Arc::new(Issued {
                            jwks,
                            address,
                            issues,
                        }),
                    ));
                }
                Err(error) => eprintln!("the upstream could not start: {error}"),
            }
        })
        .context("could not start the upstream thread")?;
    Ok(format!("http://{address}"))
}

/// What the issuer publishes.
struct Issued {
    jwks: String,
    address: SocketAddr,
    /// `GET /issues`: a page of GitHub's issue list (`crate::projection`).
    issues: String,
}

async fn serve(listener: std::net::TcpListener, issued: Arc<Issued>) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let issued = issued.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                std::future::ready(answer(&request, &issued))
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `GET /items/{id}` answers the item; `/issues` a page of issues; the issuer's metadata and
/// keys; anything else is 404.
fn answer(
    request: &Request<hyper::body::Incoming>,
    issued: &Issued,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let json = |body: String| {
        Ok(Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap_or_default())
    };
    match request.uri().path() {
        "/.well-known/oauth-authorization-server" => {
            let base = format!("http://{}", issued.address);
            return json(format!(r#"{{"issuer":"{base}","jwks_uri":"{base}/jwks"}}"#));
        }
        "/jwks" => return json(issued.jwks.clone()),
        "/issues" => return json(issued.issues.clone()),
        // The traced rows' OTLP receiver: every export accepted.
        "/v1/traces" => {
            return Ok(Response::builder()
                .header("content-type", "application/x-protobuf")
                .body(Full::new(Bytes::new()))
                .unwrap_or_default());
        }
        _ => {}
    }
    let id = request
        .uri()
        .path()
        .strip_prefix("/items/")
        .and_then(|id| id.parse::<u64>().ok());
    let response = match id {
        Some(id) => Response::builder()
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(format!(
                r#"{{"id":{id},"name":"item-{id}","price":12.5,"tags":["bench","mcp"],"in_stock":true}}"#
            )))),
        None => Response::builder()
            .status(StatusCode::NOT_FOUND)
            .body(Full::new(Bytes::new())),
    };
    Ok(response.unwrap_or_default())
}
