#!/usr/bin/env bash
# Speed and memory benchmark of a manifest-less tree (issue 18): the kind of tree a Bazel or Buck
# monorepo, vendored sources or a directory of loose files is, where no `Cargo.toml` says which
# files make one crate. The tree is built in /tmp (never in the repository, never committed) from
# the `.rs` files of the crates cargo has already fetched ($CARGO_HOME/registry/src), copied
# with their directories but without any `Cargo.toml`, until it holds SIZE_MB of sources.
# timeoutlint (every rule on, SARIF written) runs side by side with the parse floor (walk +
# syn::parse_file + a full syn::visit of every file, same threads), interleaved round by round
# so a machine loaded by others slows both alike: the ratios are the figures, not the seconds.
#
#   benches/bench_loose.sh                       # 50 MB tree, 3 rounds, all cores
#   SIZE_MB=800 ROUNDS=3 THREADS=2 benches/bench_loose.sh
#   TREE=/tmp/my-tree benches/bench_loose.sh     # an existing tree, as it is
#   BIN=/tmp/other-timeoutlint benches/bench_loose.sh   # another build against the same floor
#
# Prints each round (wall, CPU = user + system, peak RSS), then the medians, both ratios
# (target: <= 0.5) and the peak RSS (target: < 400 MiB).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-$(nproc)}
SIZE_MB=${SIZE_MB:-50}
BIN=${BIN:-target/release/timeoutlint}
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
tree=${TREE:-/tmp/timeoutlint-loose-${SIZE_MB}mb}
cargo build --release --quiet --bin timeoutlint --example parse_floor

if [ -z "${TREE:-}" ] && [ ! -f "$tree/.complete" ]; then
  [ -d "$registry" ] || { echo "no $registry: fetch some crates first (cargo fetch)" >&2; exit 1; }
  rm -rf "$tree"
  mkdir -p "$tree"
  # Whole crates in name order until the size is reached, so a unit's files stay together as
  # they would in a monorepo; only `.rs` files, so no manifest says where a crate starts.
  python3 - "$registry" "$tree" "$SIZE_MB" <<'PY'
import os, shutil, sys
registry, tree, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
limit, total = size_mb * 1_000_000, 0
crates = sorted(os.path.join(registry, index, c) for index in os.listdir(registry)
                for c in os.listdir(os.path.join(registry, index))
                if os.path.isdir(os.path.join(registry, index, c)))
for crate in crates:
    if total >= limit:
        break
    for dirpath, dirs, files in os.walk(crate):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            src = os.path.join(dirpath, f)
            if os.path.islink(src) or not os.path.isfile(src):
                continue
            dst = os.path.join(tree, os.path.basename(crate), os.path.relpath(src, crate))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(src, dst)
            total += os.path.getsize(src)
PY
  touch "$tree/.complete"
fi
echo "tree: $tree: $(find "$tree" -name '*.rs' | wc -l) files, $(du -sh --exclude=.complete "$tree" | cut -f1), $(find "$tree" -name Cargo.toml | wc -l) manifests; threads $THREADS; load: $(cut -d' ' -f1-3 /proc/loadavg)"

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
  measure floor target/release/examples/parse_floor --threads "$THREADS" "$tree"
  measure timeoutlint "$BIN" --isolated --no-progress --threads "$THREADS" \
    --extend-select all --format sarif "$tree"
done
python3 - "$out" <<'PY'
import statistics, sys, os
d = sys.argv[1]
def load(n):
    rows = [l.split() for l in open(os.path.join(d, n)) if l.strip()]
    return [float(r[0]) for r in rows], [float(r[1]) for r in rows], [int(r[2]) for r in rows]
fw, fc, fm = load("floor"); tw, tc, tm = load("timeoutlint")
# Per-round ratios (the rounds are interleaved, so each pair saw the same load), then medians.
rw = statistics.median(t / f for t, f in zip(tw, fw))
rc = statistics.median(t / f for t, f in zip(tc, fc))
print(f"median: parse floor {statistics.median(fw):.2f} s, {statistics.median(fc):.2f} CPU-s; "
      f"timeoutlint {statistics.median(tw):.2f} s, {statistics.median(tc):.2f} CPU-s")
print(f"ratio (median of rounds): wall {rw:.2f}, CPU {rc:.2f} (target <= 0.50)")
print(f"peak RSS: parse floor {max(fm)/1024:.0f} MiB, timeoutlint {max(tm)/1024:.0f} MiB (target < 400)")
PY
