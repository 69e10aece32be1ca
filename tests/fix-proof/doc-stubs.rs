// The names the rule docs' `Use instead` blocks leave to the reader (`fetch()`, a `Cache`),
// so each block compiles as written. tests/it/fixes.rs puts each block in its own module with
// `use crate::stubs::*;`. A new doc that needs another stand-in adds it here.

pub async fn fetch() -> Result<(), std::io::Error> {
    Ok(())
}

pub struct Cache;

impl Cache {
    pub async fn reload(&self) {}
}

/// A request payload the docs send.
#[derive(Debug, serde::Serialize)]
pub struct Order {
    /// Anything serialisable.
    pub amount: u64,
}

/// A service client whose `call` is one attempt.
pub struct Client;

/// What a call returns.
pub struct Response;

impl Client {
    pub async fn call(&self) -> Result<Response, std::io::Error> {
        Ok(Response)
    }
}
