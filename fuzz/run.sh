#!/usr/bin/env bash
# Fuzz the `lint` target for N seconds (default 60), on one core: install cargo-fuzz when it is
# missing (into the gitignored .tools/), seed the corpus from our own code, run libFuzzer, print
# the figures. Exits non-zero only when libFuzzer finds a crash, a hang or an out-of-memory
# input, and says which (libFuzzer's artifact prefix: crash-, timeout-, oom-, leak-); the input
# is saved under fuzz/artifacts/lint/ and the log tail printed. A per-input timeout is judged
# again on CPU time, so a loaded machine is not taken for a hang (see below).
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
# -timeout: libFuzzer's per-input limit is wall-clock time, and CI shares its cores with other
# jobs: at load 10 on 2 cores an input gets a fifth of a core, so 10 wall-seconds may be 2
# CPU-seconds of work. An input it stops is therefore run again alone under a CPU-time limit
# (`ulimit -t`, $hang_cpu CPU-seconds; a real 64 KiB file takes milliseconds): past it, a hang;
# within it, the machine's load, and fuzzing goes on for the time left, the input set aside
# under fuzz/artifacts/slow-under-load/ for anyone to look at.
# -rss_limit_mb: memory does not depend on the load; an input past 4 GiB is a real failure.
# The full log stays beside the crash inputs (gitignored; not in artifacts/lint/, where
# cargo-fuzz takes every new file for a failing input), for a CI job to keep.
hang_cpu=10
artifacts="$fuzz/artifacts/lint"
aside="$fuzz/artifacts/slow-under-load"
mkdir -p "$artifacts" "$aside"
log="$fuzz/artifacts/run.log"
round_log="$fuzz/artifacts/round.log"
: >"$log"

# Built first, so the minute is fuzzing, not compiling.
cargo fuzz build lint -s none -a >>"$log" 2>&1 || { tail -n 40 "$log"; exit 1; }
bin="$fuzz/target/$(rustc -vV | sed -n 's/^host: //p')/release/lint"

# Fails the run, saying what was found: $1 libFuzzer's exit status, $2 the saved input (named
# by libFuzzer's artifact prefix), $3 what it is when the prefix alone does not tell.
fail() {
  local status="$1" input="$2" what="${3:-}"
  tail -n 80 "$log"
  if [ -z "$what" ]; then
    case "$(basename "${input:-none}")" in
      crash-*) what="a crash (a panic or an abort)" ;;
      oom-*) what="an out-of-memory input (over -rss_limit_mb or -malloc_limit_mb)" ;;
      leak-*) what="a leak" ;;
      slow-unit-*) what="a slow input" ;;
      *) what="libFuzzer exit $status and no input saved (killed from outside, e.g. by the system's OOM killer?)" ;;
    esac
  fi
  echo "fuzz: FAILED: $what${input:+: $input}" >&2
  [ -z "$input" ] || echo "fuzz: reproduce with: cargo fuzz run lint -s none -a $input" >&2
  exit "$status"
}

end=$((SECONDS + seconds))
set_aside=0
while :; do
  left=$((end - SECONDS))
  [ "$left" -ge 1 ] || break
  status=0
  "$bin" "$corpus" -dict="$fuzz/dict" -max_total_time="$left" -max_len=65536 -timeout=10 \
    -rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    >"$round_log" 2>&1 || status=$?
  cat "$round_log" >>"$log"
  [ "$status" -ne 0 ] || break
  input="$(sed -n 's/.*Test unit written to \([^ ]*\).*/\1/p' "$round_log" | tail -n 1)"
  case "$(basename "${input:-none}")" in
    timeout-*) ;;
    *) fail "$status" "$input" ;;
  esac
  # A wall-clock timeout: the input again, alone, under a CPU-time limit (the kernel ends it
  # with SIGXCPU past $hang_cpu CPU-seconds) and without libFuzzer's wall-clock one.
  again=0
  cpu="$(python3 - "$hang_cpu" "$log" "$bin" -timeout=0 -runs=1 "$input" <<'PY'
import resource, subprocess, sys
limit, log, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
def cap():  # soft limit only: SIGXCPU, not the SIGKILL of a hard one
    resource.setrlimit(resource.RLIMIT_CPU, (limit, resource.RLIM_INFINITY))
with open(log, "a") as out:
    code = subprocess.run(cmd, preexec_fn=cap, stdout=out, stderr=subprocess.STDOUT).returncode
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{used.ru_utime + used.ru_stime:.2f}")
sys.exit(code if code >= 0 else 128 - code)
PY
)" || again=$?
  if [ "$again" -eq $((128 + 24)) ]; then
    fail "$status" "$input" "a hang (still running after ${hang_cpu} CPU-seconds alone)"
  elif [ "$again" -ne 0 ]; then
    fail "$again" "$input" "an input that timed out, then failed alone (exit $again after $cpu CPU-seconds)"
  fi
  echo "fuzz: $(basename "$input") went past libFuzzer's 10 s wall-clock limit but takes $cpu CPU-seconds alone: the machine's load, not a hang; set aside in $aside"
  mv "$input" "$aside/"
  set_aside=$((set_aside + 1))
  # Three in one run means the machine leaves us almost no CPU: say so rather than go on.
  if [ "$set_aside" -ge 3 ]; then
    echo "fuzz: $set_aside inputs timed out only under load; stopping early, nothing found" >&2
    break
  fi
done

# The figures: libFuzzer's last status line (cov: edges, ft: features, corp: entries/size) and
# its final stats.
grep -E "^#[0-9]+[[:space:]]+DONE" "$log" | tail -n 1 || true
grep -E '^Done [0-9]+ runs|^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" || true
echo "fuzz: corpus has $(find "$corpus" -type f | wc -l) entries; no crash, hang or out-of-memory input in ${seconds}s"
