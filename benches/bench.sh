#!/usr/bin/env bash
# Speed benchmark: timeoutlint (every rule on, SARIF written) against the parse floor (walk +
# syn::parse_file + a full syn::visit of every file, same threads), side by side on the same
# real corpus: the crates pinned by benches/corpus/Cargo.lock, fetched with cargo.
#
#   benches/bench.sh            # 3 rounds, all cores
#   ROUNDS=5 THREADS=2 benches/bench.sh
#
#   BIN=/tmp/other-timeoutlint benches/bench.sh   # another build against the same floor
#
# Prints each round (wall, CPU = user + system, peak RSS), then the medians, both ratios (the
# median of the per-round ratios: each pair of a round saw the same load; target <= 0.5) and
# the peak RSS.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-$(nproc)}
BIN=${BIN:-target/release/timeoutlint}
cargo build --release --quiet --bin timeoutlint --example parse_floor
cargo fetch --quiet --locked --manifest-path benches/corpus/Cargo.toml
mapfile -t CORPUS < <(cargo metadata --locked --format-version 1 --manifest-path benches/corpus/Cargo.toml |
  python3 -c 'import json,sys,os; m=json.load(sys.stdin); print("\n".join(sorted({os.path.dirname(p["manifest_path"]) for p in m["packages"] if p["source"]})))')
echo "corpus: ${#CORPUS[@]} crates, $(find "${CORPUS[@]}" -name '*.rs' | wc -l) files, $(find "${CORPUS[@]}" -name '*.rs' -print0 | du -ch --files0-from=- | tail -1 | cut -f1); threads $THREADS; load: $(cut -d' ' -f1-3 /proc/loadavg)"
out=$(mktemp -d)
measure() { # name, command...: appends "wall cpu kb" to $out/name
  local name=$1; shift
  /usr/bin/time -f "%e %U %S %M" -o "$out/t" "$@" > /dev/null 2>&1 || true
  # GNU time prefixes "Command exited with non-zero status N" (exit 1 = findings): keep the figures.
  tail -n 1 "$out/t" | awk '{ print $1, $2 + $3, $4 }' >> "$out/$name"
  echo "  $name: $(tail -n 1 "$out/$name" | awk '{printf "%.2f s wall, %.2f CPU-s, %d MiB", $1, $2, $3/1024}')"
}
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r (load $(cut -d' ' -f1 /proc/loadavg))"
  measure floor target/release/examples/parse_floor --threads "$THREADS" "${CORPUS[@]}"
  measure timeoutlint "$BIN" --isolated --no-progress --threads "$THREADS" \
    --extend-select all --format sarif "${CORPUS[@]}"
done
python3 - "$out" <<'PY'
import statistics, sys, os
d = sys.argv[1]
def load(n):
    rows = [l.split() for l in open(os.path.join(d, n)) if l.strip()]
    return [float(r[0]) for r in rows], [float(r[1]) for r in rows], [int(r[2]) for r in rows]
fw, fc, fm = load("floor"); tw, tc, tm = load("timeoutlint")
rw = statistics.median(t / f for t, f in zip(tw, fw))
rc = statistics.median(t / f for t, f in zip(tc, fc))
print(f"median: parse floor {statistics.median(fw):.2f} s, {statistics.median(fc):.2f} CPU-s; "
      f"timeoutlint {statistics.median(tw):.2f} s, {statistics.median(tc):.2f} CPU-s")
print(f"ratio (median of rounds): wall {rw:.2f}, CPU {rc:.2f} (target <= 0.50)")
print(f"peak RSS: parse floor {max(fm)/1024:.0f} MiB, timeoutlint {max(tm)/1024:.0f} MiB (target < 400)")
PY
