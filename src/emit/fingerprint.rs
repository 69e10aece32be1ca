//! GitHub's `primaryLocationLineHash`: a rolling hash over the 100 non-whitespace UTF-16 code
//! units that start at each line, so an alert keeps its identity when lines above it move.
//!
//! A port of github/codeql-action `src/fingerprints.ts`, which computes the same value when a
//! SARIF upload lacks it; emitting GitHub's exact value means our alerts match whether or not
//! the upload step fills it in. Golden values from GitHub's code are in the emitter tests.
//! Deliberately absent: the other fingerprints (GitHub computes none of them for us).

use std::collections::HashMap;

/// The number of code units hashed from the start of a line on.
const BLOCK_SIZE: usize = 100;
/// The hash's multiplier.
const MOD: u64 = 37;
/// What the original feeds in after the last character (JavaScript's `0xFFFF` end marker).
const EOF: u16 = 0xFFFF;

/// The hash of every line start, index 0 for line 1. Like the original, the list includes the
/// line after a final newline.
#[must_use]
pub fn line_hashes(text: &str) -> Vec<String> {
    let mut state = State::new();
    for unit in text.encode_utf16() {
        state.process(unit);
    }
    state.process(EOF);
    // Flush the line starts still in the window.
    for _ in 0..BLOCK_SIZE {
        if state.line_numbers[state.index].is_some() {
            state.output();
        }
        state.update(0);
    }
    state.out
}

struct State {
    window: [u64; BLOCK_SIZE],
    /// The 1-based line that starts at each window slot.
    line_numbers: [Option<usize>; BLOCK_SIZE],
    hash: u64,
    first_mod: u64,
    index: usize,
    line_number: usize,
    line_start: bool,
    prev_cr: bool,
    /// How often each hash was seen, to number repeats (`:1`, `:2`, ...).
    counts: HashMap<u64, usize>,
    out: Vec<String>,
}

impl State {
    fn new() -> Self {
        Self {
            window: [0; BLOCK_SIZE],
            line_numbers: [None; BLOCK_SIZE],
            hash: 0,
            first_mod: (0..BLOCK_SIZE).fold(1u64, |m, _| m.wrapping_mul(MOD)),
            index: 0,
            line_number: 0,
            line_start: true,
            prev_cr: false,
            counts: HashMap::new(),
            out: Vec::new(),
        }
    }

    fn process(&mut self, unit: u16) {
        let mut current = u64::from(unit);
        // Tabs and spaces do not count, and CRLF counts once, as LF.
        if unit == u16::from(b' ') || unit == u16::from(b'\t') || (self.prev_cr && unit == 10) {
            self.prev_cr = false;
            return;
        }
        if unit == 13 {
            current = 10;
            self.prev_cr = true;
        } else {
            self.prev_cr = false;
        }
        if self.line_numbers[self.index].is_some() {
            self.output();
        }
        if self.line_start {
            self.line_start = false;
            self.line_number += 1;
            self.line_numbers[self.index] = Some(self.line_number);
        }
        if current == 10 {
            self.line_start = true;
        }
        self.update(current);
    }

    /// JavaScript's `Long` wraps at 64 bits like `u64` does, and its unsigned hex has no padding.
    fn update(&mut self, current: u64) {
        let begin = self.window[self.index];
        self.window[self.index] = current;
        self.hash = MOD
            .wrapping_mul(self.hash)
            .wrapping_add(current)
            .wrapping_sub(self.first_mod.wrapping_mul(begin));
        self.index = (self.index + 1) % BLOCK_SIZE;
    }

    fn output(&mut self) {
        let count = self.counts.entry(self.hash).or_insert(0);
        *count += 1;
        if let Some(line) = self.line_numbers[self.index].take() {
            if self.out.len() < line {
                self.out.resize(line, String::new());
            }
            self.out[line - 1] = format!("{:x}:{count}", self.hash);
        }
    }
}
