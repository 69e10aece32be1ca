//! The edge of the program, above the driver: arguments and the exit code ([`cli`]), the
//! adoption workflow and its files ([`adopt`], [`baseline`]), `--fix` writing files
//! ([`fix`]), the language server ([`server`]) and `--watch`'s loop ([`watch`]). IO that the
//! pipeline below must not do happens here (and in `walk`, which reads the files it finds).

pub mod adopt;
pub mod baseline;
pub mod cli;
pub mod fix;
pub mod server;
pub mod watch;
