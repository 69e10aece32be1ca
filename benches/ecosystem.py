#!/usr/bin/env python3
"""Ecosystem check: lint the pinned corpus (benches/corpus) and compare with another build.

Like ruff's ecosystem check: every finding that appears or disappears between two linter
builds is printed, so a change to a rule or to the analysis is judged on 1,274 real crates,
not on the fixtures it was written for.

    benches/ecosystem.py save BIN OUT.json            # lint the corpus with BIN, keep the result
    benches/ecosystem.py diff OLD.json NEW.json       # what appeared / disappeared, per rule
    benches/ecosystem.py run OLD_BIN NEW_BIN          # both at once (the usual before/after)

Every rule runs (`--extend-select all`), on the whole corpus in one run, as the benchmark does.
A finding is keyed by (file relative to the registry, rule, line, column, message); a finding
whose message or fix changed shows as one disappearing and one appearing. Per-file errors
are compared too. `diff` exits 1 when anything differs, so a script can require "no change".
"""
import collections, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "corpus", "Cargo.toml")


def corpus_dirs():
    subprocess.run(["cargo", "fetch", "--quiet", "--locked", "--manifest-path", MANIFEST], check=True)
    meta = subprocess.run(["cargo", "metadata", "--locked", "--format-version", "1", "--manifest-path", MANIFEST],
                          check=True, capture_output=True, text=True)
    pkgs = json.loads(meta.stdout)["packages"]
    return sorted({os.path.dirname(p["manifest_path"]) for p in pkgs if p["source"]})


def lint(binary, dirs):
    cmd = [binary, "--isolated", "--no-progress", "--extend-select", "all", "--format", "json", *dirs]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 1, 2):
        sys.stderr.write(p.stderr[-4000:])
        raise SystemExit(f"{binary} exited {p.returncode}")
    doc = json.loads(p.stdout)
    root = os.path.commonpath(dirs) if dirs else ""

    def rel(path):
        return os.path.relpath(path, root) if os.path.isabs(path) else path

    findings = sorted({(rel(d["path"]), d["rule"], d["range"]["start"]["line"], d["range"]["start"]["column"],
                        d["message"], (d.get("fix") or {}).get("applicability") or "")
                       for d in doc["diagnostics"]})
    errors = sorted({(rel(e["path"]), e.get("line") or 0, e["message"]) for e in doc["errors"]})
    return {"findings": [list(f) for f in findings], "errors": [list(e) for e in errors],
            "files_checked": doc["summary"]["files_checked"]}


def counts(result):
    c = collections.Counter(f[1] for f in result["findings"])
    fixable = collections.Counter(f[1] for f in result["findings"] if f[5])
    return c, fixable


def diff(old, new):
    o = {tuple(f) for f in old["findings"]}
    n = {tuple(f) for f in new["findings"]}
    gone, came = sorted(o - n), sorted(n - o)
    oc, ofix = counts(old)
    nc, nfix = counts(new)
    print(f"{'rule':34} {'before':>7} {'after':>7} {'fixable before':>15} {'after':>6}")
    for rule in sorted(set(oc) | set(nc)):
        print(f"{rule:34} {oc[rule]:7} {nc[rule]:7} {ofix[rule]:15} {nfix[rule]:6}")
    print(f"{'total':34} {sum(oc.values()):7} {sum(nc.values()):7} {sum(ofix.values()):15} {sum(nfix.values()):6}")
    print(f"files checked: {old['files_checked']} -> {new['files_checked']}")
    for title, rows in (("disappeared", gone), ("appeared", came)):
        print(f"\n{title}: {len(rows)}")
        for f in rows:
            print(f"  {f[0]}:{f[2]}:{f[3]} {f[1]}: {f[4]}" + (f" [fix: {f[5]}]" if f[5] else ""))
    oe = {tuple(e) for e in old["errors"]}
    ne = {tuple(e) for e in new["errors"]}
    for title, rows in (("errors gone", sorted(oe - ne)), ("errors new", sorted(ne - oe))):
        if rows:
            print(f"\n{title}: {len(rows)}")
            for e in rows:
                print(f"  {e[0]}:{e[1]}: {e[2]}")
    return 1 if (gone or came or oe != ne) else 0


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("save", "diff", "run"):
        raise SystemExit(__doc__)
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "save" and len(args) == 2:
        with open(args[1], "w") as fh:
            json.dump(lint(args[0], corpus_dirs()), fh)
        return 0
    if cmd == "diff" and len(args) == 2:
        return diff(*(json.load(open(a)) for a in args))
    if cmd == "run" and len(args) == 2:
        dirs = corpus_dirs()
        return diff(lint(args[0], dirs), lint(args[1], dirs))
    raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
