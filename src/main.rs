//! The `timeoutlint` binary: maps the run's outcome to an exit code, nothing else.

fn main() -> std::process::ExitCode {
    timeoutlint::edge::cli::main()
}
