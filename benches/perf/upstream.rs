//! A small keep-alive HTTP upstream on 127.0.0.1 for the HTTP-backed tool, on a thread and
//! runtime of its own.

use std::convert::Infallible;
use std::net::SocketAddr;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::Full;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;

/// Starts the upstream and returns its base URL. It runs until the process exits.
pub(crate) fn start() -> anyhow::Result<String> {
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
                Ok(runtime) => runtime.block_on(serve(listener)),
                Err(error) => eprintln!("the upstream could not start: {error}"),
            }
        })
        .context("could not start the upstream thread")?;
    Ok(format!("http://{address}"))
}

async fn serve(listener: std::net::TcpListener) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(answer);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// `GET /items/{id}` answers the item; anything else is 404.
async fn answer(
    request: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
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
