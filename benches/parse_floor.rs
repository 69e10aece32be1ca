//! The parse floor: what any syn-based linter must at least pay. Walks the given paths with the
//! same walker settings as timeoutlint, reads every `.rs` file, parses it with `syn::parse_file`
//! and visits the whole tree with `syn::visit`, on the same number of big-stack threads.
//! timeoutlint's speed target is half this program's wall time on the same corpus.
//!
//! Usage: `parse_floor [--threads N] PATH...`; prints files, parse failures, and a checksum of
//! the visit so the work cannot be optimised away.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use syn::visit::Visit;

struct Count(usize);

impl<'ast> Visit<'ast> for Count {
    fn visit_expr(&mut self, e: &'ast syn::Expr) {
        self.0 += 1;
        syn::visit::visit_expr(self, e);
    }
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    if let Some(i) = args.iter().position(|a| a == "--threads") {
        threads = args[i + 1].parse().expect("--threads N");
        args.drain(i..=i + 1);
    }
    let roots: Vec<PathBuf> = args.iter().map(PathBuf::from).collect();
    let (files, _) = timeoutlint::walk::rust_files(&roots, &[]);
    let next = AtomicUsize::new(0);
    let failed = AtomicUsize::new(0);
    let exprs = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            std::thread::Builder::new()
                .stack_size(timeoutlint::parse::WORKER_STACK)
                .spawn_scoped(s, || loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    let Ok(text) = timeoutlint::walk::read(path, u64::MAX) else {
                        failed.fetch_add(1, Ordering::Relaxed);
                        continue;
                    };
                    // The same depth guard as the linter, so both refuse the same hostile files.
                    if timeoutlint::parse::too_deep(&text, timeoutlint::parse::MAX_NESTING)
                        .is_some()
                    {
                        failed.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    match syn::parse_file(&text) {
                        Ok(ast) => {
                            let mut c = Count(0);
                            c.visit_file(&ast);
                            exprs.fetch_add(c.0, Ordering::Relaxed);
                        }
                        Err(_) => {
                            failed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    proc_macro2::extra::invalidate_current_thread_spans();
                })
                .expect("spawn worker");
        }
    });
    println!(
        "{} files, {} not parsed, {} expressions",
        files.len(),
        failed.load(Ordering::Relaxed),
        exprs.load(Ordering::Relaxed)
    );
}
