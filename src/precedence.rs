//! Precedence between rules: one finding per problem (RULES.md, "When two rules could fire on
//! one line"), as one declared table applied after every rule of a file ran.
//!
//! Rules report what they find independently and never defer to one another; where the table
//! says a winner owns a problem, the loser's finding at the same site is dropped, and only when
//! the winner's finding is there. A winner that is disabled (or ignored for the file) reports
//! nothing, so the loser's finding stays: the problem is never reported by neither.
//! Deliberately absent: any pair not in RULES.md, whose rules may fire together because they
//! report different problems.

use crate::base::diagnostic::Diagnostic;
use crate::rules::{blocking_sleep_in_async, retry_after_uncapped, uncancellable_backoff, Rule};

/// One entry: `winner` owns the problem where its finding marks the loser's primary span.
#[derive(Debug)]
pub struct Precedence {
    /// The rule whose finding is kept.
    pub winner: &'static Rule,
    /// The rule whose finding at the same site is dropped.
    pub loser: &'static Rule,
    /// Which of the winner's spans name the site.
    pub site: Site,
    /// Why the winner owns it, in one sentence.
    pub why: &'static str,
}

/// Where a winner's finding names the sites it owns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Site {
    /// Its primary span is the site (both rules point at the same call).
    Primary,
    /// Its primary and related spans are the sites (one finding per server value, at the first
    /// wait it reaches and related to the others).
    PrimaryAndRelated,
}

/// The table, in RULES.md's order.
pub static TABLE: &[Precedence] = &[
    Precedence {
        winner: &blocking_sleep_in_async::RULE,
        loser: &uncancellable_backoff::RULE,
        site: Site::Primary,
        why: "a thread sleep on the executor stalls every task on the thread, cancellable or not",
    },
    Precedence {
        winner: &retry_after_uncapped::RULE,
        loser: &uncancellable_backoff::RULE,
        site: Site::PrimaryAndRelated,
        why: "a wait the server chose needs a cap, which also bounds what cancelling could cut",
    },
];

/// Drop every finding of `diags` that a winner's finding at the same site owns, counting only
/// winners that `applies` (enabled for the file: configuration removes the others' findings
/// later, and a loser must not go with them).
pub fn apply(diags: &mut Vec<Diagnostic>, applies: impl Fn(&Rule) -> bool) {
    let owned: Vec<(usize, crate::base::source::Span)> = TABLE
        .iter()
        .enumerate()
        .filter(|(_, p)| applies(p.winner))
        .flat_map(|(i, p)| {
            diags
                .iter()
                .filter(move |d| p.winner.is(d.rule))
                .flat_map(move |d| match p.site {
                    Site::Primary => vec![(i, d.primary)],
                    Site::PrimaryAndRelated => std::iter::once((i, d.primary))
                        .chain(d.related.iter().map(|r| (i, r.span)))
                        .collect(),
                })
        })
        .collect();
    if owned.is_empty() {
        return;
    }
    diags.retain(|d| {
        !owned
            .iter()
            .any(|&(i, span)| TABLE[i].loser.is(d.rule) && d.primary == span)
    });
}
