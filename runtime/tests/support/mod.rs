//! A loopback HTTP server for the property tests: records every request, answers by script.
//!
//! Started on 127.0.0.1 port 0 by each test, so tests never share a port or reach the network.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// One request as the server saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub key: Option<String>,
    pub body: Vec<u8>,
}

/// What the server does with a request.
pub enum Reply {
    /// Answer with this status, headers and body.
    Status(u16, Vec<(&'static str, String)>),
    /// Read the request and never answer.
    Hang,
}

pub fn ok() -> Reply {
    Reply::Status(200, Vec::new())
}

pub fn status(code: u16) -> Reply {
    Reply::Status(code, Vec::new())
}

pub struct Server {
    pub addr: SocketAddr,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a server whose `handler` gets the index of the request (0 = first) and the request.
pub async fn serve<F>(handler: F) -> Server
where
    F: Fn(usize, &Seen) -> Reply + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let handler = Arc::new(handler);
    let recorded = Arc::clone(&seen);
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let seen = Arc::clone(&recorded);
            let handler = Arc::clone(&handler);
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<Incoming>| {
                    let seen = Arc::clone(&seen);
                    let handler = Arc::clone(&handler);
                    async move {
                        let method = request.method().to_string();
                        let key = request
                            .headers()
                            .get("idempotency-key")
                            .map(|v| v.to_str().unwrap().to_owned());
                        let body = match request.into_body().collect().await {
                            Ok(collected) => collected.to_bytes().to_vec(),
                            Err(_) => b"<body error>".to_vec(),
                        };
                        let entry = Seen { method, key, body };
                        let reply = {
                            let mut seen = seen.lock().unwrap();
                            let reply = handler(seen.len(), &entry);
                            seen.push(entry);
                            reply
                        };
                        match reply {
                            Reply::Hang => {
                                std::future::pending::<Result<Response<Full<Bytes>>, Infallible>>()
                                    .await
                            }
                            Reply::Status(code, headers) => {
                                let mut response = Response::builder().status(code);
                                for (name, value) in headers {
                                    response = response.header(name, value);
                                }
                                Ok(response.body(Full::new(Bytes::new())).unwrap())
                            }
                        }
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Server { addr, seen, task }
}

/// An address on which nothing listens (connections are refused).
pub async fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    addr
}
