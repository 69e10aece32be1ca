//! `timeoutlint-retry`: the retry runtime that timeoutlint's suggestions point to.
#![deny(missing_docs)]
