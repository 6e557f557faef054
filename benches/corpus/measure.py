#!/usr/bin/env python3
"""Measure how much of the public upstream Faber corpus faber parses, checks and runs.

Usage:
    benches/corpus/measure.py CORPUS [--faber BIN] [--timeout S] [--max-steps N]
                              [--jobs N] [--all] [--list] [--top N]

CORPUS is a folder holding checkouts of the upstream repositories side by side
(`examples/`, `norma/`, `triga/`, `tree-sitter-faber/`; any of them may be
missing). Nothing of the corpus is part of this repository. The rule for what is
in scope for a CPU interpreter is written in docs/corpus.md and implemented by
`out_of_scope` below; `--all` measures every unit instead.

Only the Python 3 standard library is used.
"""

import argparse
import collections
import concurrent.futures
import os
import re
import subprocess
import sys

REPOS = ["examples", "norma", "triga", "tree-sitter-faber"]

# Folders (relative to CORPUS) whose programs need something a CPU interpreter
# does not have: a GPU or a browser/canvas host (the WebGPU and Canvas 2D
# showcases), or native bindings (SQLite). See docs/corpus.md.
OUT_OF_SCOPE_DIRS = [
    ("examples/gpu-workload", "GPU"),
    ("examples/hello-voxel", "GPU"),
    ("examples/triga-budapest", "GPU"),
    ("examples/triga-drift-city", "GPU"),
    ("examples/browser-app", "browser"),
    ("examples/web-canvas2d-smoke", "browser"),
    ("examples/canvas2d-interactive", "browser"),
    ("examples/sqlite", "native bindings"),
    ("triga", "GPU"),
]

# Conversion-matrix cells (examples/conversio-matrix/FROM/TO.fab) are in scope
# when both types are ones the CPU interpreter is meant to have (docs/corpus.md):
# the families of the language subset plus the data types issue 23 adds.
MATRIX = "examples/conversio-matrix"
MATRIX_TYPES = {
    "ascii", "bivalens", "copia", "fractus", "intervallum", "json", "lista",
    "numerus", "octeti", "tabula", "tensor", "textus", "valor",
}

ERROR_RE = re.compile(r"^error\[([A-Z]+[0-9]+)\]: (.*)$", re.M)
PANIC_RE = re.compile(r"panicked|please report", re.I)


def find_units(corpus, per_package):
    """Every unit: each .fab file (default), or with `per_package` a package (a
    folder with faber.toml, measured through its entry) and each .fab outside one.
    Returns (path, kind, cwd) with cwd the package root above the file, if any."""
    packages = []
    files = []
    for repo in REPOS:
        root = os.path.join(corpus, repo)
        if not os.path.isdir(root):
            continue
        for d, dirs, names in os.walk(root):
            dirs.sort()
            if "faber.toml" in names:
                packages.append(d)
            for n in sorted(names):
                if n.endswith(".fab"):
                    files.append(os.path.join(d, n))
    pkg_set = sorted(packages, key=len, reverse=True)

    def package_of(f):
        return next((p for p in pkg_set if f.startswith(p + os.sep)), None)

    units = [(p, "package", p) for p in packages] if per_package else []
    for f in files:
        pkg = package_of(f)
        if per_package and pkg:
            continue
        units.append((f, "file", pkg or os.path.dirname(f)))
    return sorted(units)


def rel(corpus, path):
    return os.path.relpath(path, corpus).replace(os.sep, "/")


def package_target(path):
    try:
        with open(os.path.join(path, "faber.toml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    m = re.search(r'^\s*targets?\s*=\s*(.*)$', text, re.M)
    return m.group(1) if m else None


def out_of_scope(corpus, path, kind):
    """The reason a unit is outside a CPU interpreter's scope, or None."""
    r = rel(corpus, path)
    for d, why in OUT_OF_SCOPE_DIRS:
        if r == d or r.startswith(d + "/"):
            return why
    if r.startswith(MATRIX + "/") and kind == "file":
        parts = r[len(MATRIX) + 1:].split("/")
        if len(parts) == 2:
            src, dst = parts[0], parts[1][:-4]
            if src not in MATRIX_TYPES or dst not in MATRIX_TYPES:
                return "type outside the subset"
    if kind == "package":
        t = package_target(path)
        if t is not None and '"ts"' in t and '"rust"' not in t:
            return "browser"
    return None


def folder_of(corpus, path):
    """The folder a unit is reported under: repo/top-level folder."""
    parts = rel(corpus, path).split("/")
    if parts[0] == "examples" and len(parts) > 2:
        return "/".join(parts[:2])
    if len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


# Every reader locale's spelling of `incipit` / `incipiet`, from faber's own
# vocabulary table (src/syntax/vocabulary.txt): a program in another locale has
# an entry too. Latin alone when the table cannot be read.
VOCABULARY = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "..", "..", "src", "syntax", "vocabulary.txt")


def entry_words():
    words = {"incipit", "incipiet"}
    try:
        with open(VOCABULARY, encoding="utf-8") as f:
            for line in f:
                cells = line.split()
                if len(cells) > 3 and cells[0] == "kw" and cells[1] in words:
                    # A cell's older spellings follow `|`.
                    words.update(w for c in cells[3:] for w in c.split("|")
                                 if w != "-")
    except OSError:
        pass
    return words


ENTRY_RE = re.compile(r"^\s*(%s)(?![\w])" % "|".join(
    re.escape(w) for w in sorted(entry_words(), key=len, reverse=True)), re.M)


def has_entry(path, kind):
    """Whether the unit has an `incipit` (something to run)."""
    if kind == "file":
        paths = [path]
    else:
        paths = []
        for d, _, names in os.walk(path):
            paths += [os.path.join(d, n) for n in names if n.endswith(".fab")]
    for p in paths:
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                if ENTRY_RE.search(f.read()):
                    return True
        except OSError:
            pass
    return False


def run_faber(args, cwd, timeout, env):
    try:
        p = subprocess.run(
            args, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
            timeout=timeout, env=env,
        )
        return p.returncode, p.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        return "timeout", ""


def first_error(stderr):
    m = ERROR_RE.search(stderr)
    if not m:
        return None
    return m.group(1), m.group(2)


def measure_unit(faber, corpus, path, kind, cwd, opts, env):
    res = {"path": rel(corpus, path), "kind": kind, "entry": has_entry(path, kind)}
    target = "." if kind == "package" else os.path.relpath(path, cwd)
    panics = 0
    stage_ok = {}
    blocker = None
    for stage in ("parse", "check", "run"):
        if stage == "run" and not res["entry"]:
            break
        cmd = [faber, "-q", stage]
        if stage == "run":
            cmd += ["--max-steps", str(opts.max_steps)]
        cmd += [target]
        code, err = run_faber(cmd, cwd, opts.timeout, env)
        # A Rust panic exits 101; a signal (an abort, a stack overflow) is negative.
        if PANIC_RE.search(err) or (isinstance(code, int) and (code == 101 or code < 0)):
            panics += 1
        # `faber run` exits with the program's `exitus` code; only a diagnostic
        # (an `error[` line) marks a failure there.
        # (`exitus 1` included: a diagnostic always prints an `error[` line; a
        # panic, 101, is never a success.)
        ok = code == 0 or (stage == "run" and isinstance(code, int) and code >= 1
                           and code != 101 and not ERROR_RE.search(err)
                           and not PANIC_RE.search(err))
        stage_ok[stage] = ok
        if not ok:
            if code == "timeout":
                blocker = (stage, "TIMEOUT", "no result within %ss" % opts.timeout)
            else:
                e = first_error(err)
                if e:
                    blocker = (stage, e[0], e[1])
                else:
                    line = err.strip().splitlines()[-1:] or ["exit %s" % code]
                    blocker = (stage, "EXIT%s" % code, line[0][:100])
            break
    res["ok"] = stage_ok
    res["blocker"] = blocker
    res["panics"] = panics
    return res


def normalise(msg):
    """Group messages that differ only in names, numbers and quoted text."""
    # A quoted single word (a keyword, a type, a module) names the construct:
    # keep it; longer quoted code is elided.
    msg = re.sub(r"`([^`]*)`", lambda m: m.group(0) if re.fullmatch(
        r"[\w:./§!↦-]{1,24}", m.group(1)) else "`…`", msg)
    msg = re.sub(r'"[^"]*"', '"…"', msg)
    msg = re.sub(r"\b\d+\b", "N", msg)
    return msg[:90]


def pct(n, d):
    return "   -  " if d == 0 else "%5.1f%%" % (100.0 * n / d)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus")
    here = os.path.dirname(os.path.abspath(__file__))
    # The newer of the release and the debug build.
    builds = [os.path.join(here, "..", "..", "target", b, "faber") for b in ("release", "debug")]
    builds = [b for b in builds if os.path.exists(b)]
    default_bin = max(builds, key=os.path.getmtime) if builds else "faber"
    ap.add_argument("--faber", default=default_bin)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--max-steps", type=int, default=5_000_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--all", action="store_true", help="ignore the scope rule")
    ap.add_argument("--per-package", action="store_true",
                    help="one unit per package (its entry) instead of one per file")
    ap.add_argument("--list", action="store_true", help="print every unit's result")
    ap.add_argument("--top", type=int, default=15)
    opts = ap.parse_args()

    faber = os.path.abspath(opts.faber)
    corpus = os.path.abspath(opts.corpus)
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    for k in ("CLICOLOR_FORCE", "FORCE_COLOR"):
        env.pop(k, None)

    units = find_units(corpus, opts.per_package)
    scoped = []
    excluded = collections.Counter()
    for path, kind, cwd in units:
        why = None if opts.all else out_of_scope(corpus, path, kind)
        if why:
            excluded[why] += 1
        else:
            scoped.append((path, kind, cwd))

    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as ex:
        results = list(ex.map(
            lambda u: measure_unit(faber, corpus, u[0], u[1], u[2], opts, env), scoped))

    print("faber: %s" % faber)
    print("units: %d found, %d in scope (excluded: %s)" % (
        len(units), len(scoped),
        ", ".join("%d %s" % (n, w) for w, n in sorted(excluded.items())) or "none"))
    print()
    folders = collections.OrderedDict()
    for r in sorted(results, key=lambda r: folder_of(corpus, os.path.join(corpus, r["path"]))):
        folders.setdefault(folder_of(corpus, os.path.join(corpus, r["path"])), []).append(r)
    print("%-34s %5s %7s %7s %7s %6s" % ("folder", "units", "parse", "check", "run", "runnable"))

    def row(name, rs):
        n = len(rs)
        p = sum(1 for r in rs if r["ok"].get("parse"))
        c = sum(1 for r in rs if r["ok"].get("check"))
        runnable = [r for r in rs if r["entry"]]
        u = sum(1 for r in runnable if r["ok"].get("run"))
        print("%-34s %5d %7s %7s %7s %6d" % (name, n, pct(p, n), pct(c, n), pct(u, n), len(runnable)))

    for name, rs in folders.items():
        row(name, rs)
    row("TOTAL", results)
    print()
    print("run % counts a unit without an incipit (a library module) as not run;")
    print("runnable = units with an incipit. Units: %s." % (
        "packages and files outside them" if opts.per_package else "files"))
    panics = sum(r["panics"] for r in results)
    print("panics: %d" % panics)
    print()

    codes = collections.Counter()
    msgs = collections.Counter()
    for r in results:
        if r["blocker"]:
            stage, code, msg = r["blocker"]
            codes[(stage, code)] += 1
            msgs[(stage, code, normalise(msg))] += 1
    rejected = sum(1 for r in results if r["blocker"] and r["blocker"][1] == "SEM029"
                   and r["path"].startswith(MATRIX + "/"))
    checked = sum(1 for r in results if r["ok"].get("check"))
    print("conversion-matrix cells refused at check time as a conversion the matrix")
    print("rejects (SEM029, counted as not checked above): %d" % rejected)
    print("check with those refusals counted as the expected verdict: %s" % pct(
        checked + rejected, len(results)).strip())
    print()
    print("top blockers (first error of the first failing stage), by code:")
    for (stage, code), n in codes.most_common(opts.top):
        print("  %4d  %-5s %s" % (n, stage, code))
    print()
    print("top blockers by message:")
    for (stage, code, msg), n in msgs.most_common(opts.top):
        print("  %4d  %-5s %-8s %s" % (n, stage, code, msg))

    if opts.list:
        print()
        for r in results:
            b = r["blocker"]
            state = "run" if r["ok"].get("run") else "check" if r["ok"].get("check") \
                else "parse" if r["ok"].get("parse") else "-"
            print("%-6s %s %s" % (state, r["path"],
                                 "" if not b else "[%s %s] %s" % b))
    return 0


if __name__ == "__main__":
    sys.exit(main())
