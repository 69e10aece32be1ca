#!/usr/bin/env bash
# Fuzz the `lint` target for N seconds (default 60), on one core: install cargo-fuzz when it is
# missing (into the gitignored .tools/), seed the corpus from our own code, run libFuzzer, print
# the figures. Exits non-zero when libFuzzer finds a crash, a per-input timeout or an
# out-of-memory input; the input is saved under fuzz/artifacts/lint/ and its log tail printed.
#
#   fuzz/run.sh [seconds]          e.g. fuzz/run.sh 600
#   cargo fuzz run lint -- ...     the same target by hand (see fuzz/fuzz_targets/lint.rs)
set -euo pipefail
seconds="${1:-60}"
fuzz="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$fuzz")"
cd "$root"

cargo_fuzz_version=0.13.2
tools="$root/.tools/cargo-fuzz"
export PATH="$tools/bin:$PATH"
if ! cargo fuzz --version >/dev/null 2>&1; then
  cargo install cargo-fuzz --locked --version "$cargo_fuzz_version" --root "$tools"
fi
# The instrumentation flags cargo-fuzz passes are unstable; a stable compiler (all CI may have)
# accepts them when told it is bootstrapping.
if ! rustc --version | grep -q nightly; then
  export RUSTC_BOOTSTRAP=1
fi

# Seeds from our own code, never third-party files: the fixtures, the rule docs' examples and
# the runtime crate are full of the words and shapes the rules react to; fuzz/seeds/ holds
# inputs that once broke a check (a regression the fuzzer starts from). libFuzzer adds what it
# finds to the same (gitignored) directory, so a second run goes on from where the first ended.
corpus="$fuzz/corpus/lint"
mkdir -p "$corpus"
while IFS= read -r f; do
  cp "$f" "$corpus/seed-$(echo "$f" | tr '/' '_')"
done < <(find fixtures runtime/src fuzz/seeds -name '*.rs' | sort)
for doc in rules/*.md; do
  awk -v out="$corpus/seed-doc-$(basename "$doc" .md)" '
    /^```rust/ { n++; on = 1; next }
    /^```/ { on = 0; next }
    on { print > (out "-" n ".rs") }' "$doc"
done

# -s none: the linter forbids unsafe code, so AddressSanitizer would only watch dependencies, at
# a third of the speed. -a: overflow checks and debug assertions find arithmetic slips.
# -max_len: real files are longer, but 64 KiB reaches every construct and keeps runs fast.
# -timeout: one input that takes 10 s is a hang (a real file of that size takes milliseconds).
# The full log stays beside the crash inputs (gitignored; not in artifacts/lint/, where
# cargo-fuzz takes every new file for a failing input), for a CI job to keep.
mkdir -p "$fuzz/artifacts"
log="$fuzz/artifacts/run.log"
status=0
cargo fuzz run lint -s none -a "$corpus" -- \
  -dict="$fuzz/dict" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=4096 -print_final_stats=1 >"$log" 2>&1 || status=$?

if [ "$status" -ne 0 ]; then
  tail -n 80 "$log"
  echo "fuzz: FAILED (exit $status); reproduce with: cargo fuzz run lint -s none -a fuzz/artifacts/lint/<file>" >&2
  exit "$status"
fi
# The figures: libFuzzer's last status line (cov: edges, ft: features, corp: entries/size) and
# its final stats.
grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -n 1 || true
grep -E '^Done [0-9]+ runs|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
echo "fuzz: corpus has $(find "$corpus" -type f | wc -l) entries; no crash in ${seconds}s"
