// Fixture: 2015-edition code that syn's 2021 grammar rejects, with a retry loop in it.
extern crate reqwest;

use std::thread;
use std::time::Duration;

/// Called before each new attempt: a bare trait object, as 2015 writes it.
pub struct Hooks {
    pub on_retry: Box<Fn(u32) + Send>,
    pub log: Option<&'static Fn(&str)>,
}

/// `try` and `async` are plain names in 2015.
fn try(async: bool) -> bool {
    !async
}

pub fn fetch(client: &reqwest::Client, hooks: &mut Hooks, url: &str) -> reqwest::Response {
    let mut attempt = 0;
    loop {
        match client.get(url).send() {
            Ok(r) => return r,
            Err(_) if try(false) => {
                attempt += 1;
                (hooks.on_retry)(attempt);
                thread::sleep(Duration::from_millis(100)); //~ unbounded-retry
            }
            Err(_) => {}
        }
    }
}
