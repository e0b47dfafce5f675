#!/usr/bin/env python3
"""Mutation testing for tilec: plants one small bug at a time and checks that a test fails.

For each source file given, every operator and bound mutation the tables below allow is
listed (relational < <= > >= == !=, && ||, + -, << >>, & |, an integer constant +-1).  A
sample of them (--per-file, chosen with --seed so runs repeat) is applied one at a time:
the file is rewritten, the build dir is rebuilt incrementally, the test subset runs
(ctest -R, per-mutant timeout), and the file is restored byte for byte (also on ^C or
error).  A mutant that does not compile is "stillborn" and not counted.  Survivors are
printed with file:line, the original and the mutated line.

Use a build dir of its own (the default: build-mutate, configured here with shared LLVM
so each relink is quick), one job: the machine is shared.

  tools/mutate.py runtime/bundle_read.c --per-file 10
  tools/mutate.py backend/*.c --tests '^backend\\.' --per-file 4 --timeout 300
  tools/mutate.py --list runtime/launch.c          # the mutants, nothing run
  tools/mutate.py --only runtime/launch.c:123:0 ... # one mutant again (from a survivor line)
  tools/mutate.py --apply backend/lower_math.c:60:3 # plant it and stop (tools/mutate_gpu.sh)

python3 stdlib only.
"""
import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (pattern, replacement): binary operators need spaces around them (the project's style),
# so unary minus, pointers (*p, &x), ->, ++, -- and #include <x.h> are never touched.
OPERATORS = [
    (r" < ", " <= "), (r" <= ", " < "), (r" > ", " >= "), (r" >= ", " > "),
    (r" == ", " != "), (r" != ", " == "),
    (r" && ", " || "), (r" \|\| ", " && "),
    (r" \+ ", " - "), (r" - ", " + "),
    (r" << ", " >> "), (r" >> ", " << "),
    (r" & ", " | "), (r" \| ", " & "),
]
# Integer constants (decimal, not part of a name, a float or a hex literal).
CONST = re.compile(r"(?<![\w.])(\d+)(?![\w.])")

# The tests each folder's mutants run by default: the suite minus what cannot see them and
# the slow every-example sweeps (backend.example.*, backend.barriers.*).  A survivor of a
# subset is run again (--only, --tests) against every test that could see it before it
# counts as one: seed 2 had two killed only outside these (tools.report_*, math.*), both
# now in them.
DEFAULT_TESTS = {
    "backend": r"^(backend\.(check|ptxas|error|codegen|uncapped|chain|sincos)|runtime_|gpu_examples_self|tools\.(report|emit))",
    "runtime": r"^(runtime_|gpu_examples_self|tools\.)",
    "passes": r"^(passes\.|interp\.|examples\.|backend\.check|runtime_interp)",
    "ir": r"^(ir|passes\.|interp\.|backend\.check|sema|syntax|math\.)",
    "driver": r"^(tools\.|runtime_|embed|examples\.|backend\.check|passes\.)",
    "frontend": r"^(frontend|sema|syntax|parse|fe_)",
}


def code_spans(line, in_comment):
    """The parts of a line that are code: not comments, strings or char literals.
    Returns ([(start, end)], in_comment at the end of the line)."""
    spans, i, start, n = [], 0, 0, len(line)
    if in_comment:
        j = line.find("*/")
        if j < 0:
            return [], True
        i = start = j + 2
    while i < n:
        c = line[i]
        if line.startswith("/*", i):
            spans.append((start, i))
            j = line.find("*/", i + 2)
            if j < 0:
                return spans, True
            i = start = j + 2
        elif line.startswith("//", i):
            spans.append((start, i))
            return spans, False
        elif c in "\"'":
            spans.append((start, i))
            j = i + 1
            while j < n and line[j] != c:
                j += 2 if line[j] == "\\" else 1
            i = start = j + 1
        else:
            i += 1
    spans.append((start, n))
    return spans, False


def mutants_of(path):
    """Every mutant of a file: (line_no, index on that line, new_line, what)."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, in_comment = [], False
    for no, line in enumerate(lines, 1):
        spans, in_comment_next = code_spans(line, in_comment)
        in_comment = in_comment_next
        if line.lstrip().startswith("#"):
            continue  # preprocessor: include paths and macro plumbing
        found = []
        for s, e in spans:
            seg = line[s:e]
            for pat, rep in OPERATORS:
                for m in re.finditer(pat, seg):
                    a, b = s + m.start(), s + m.end()
                    found.append((a, line[:a] + rep + line[b:], f"'{m.group(0).strip()}' -> '{rep.strip()}'"))
            for m in CONST.finditer(seg):
                a, b = s + m.start(), s + m.end()
                v = int(m.group(1))
                for d in (1, -1):
                    if v + d >= 0:
                        found.append((a, line[:a] + str(v + d) + line[b:], f"{v} -> {v + d}"))
        found.sort(key=lambda t: t[0])
        for idx, (_, new, what) in enumerate(found):
            out.append((no, idx, new, what))
    return lines, out


def run(cmd, timeout, cwd=None):
    """(returncode or 'timeout', output tail); the whole process group dies on timeout."""
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        return p.returncode, out.decode(errors="replace")[-20000:]
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return "timeout", ""


def configure(build):
    if os.path.exists(os.path.join(build, "CMakeCache.txt")):
        return
    rc, out = run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
                   "-DTILEC_LLVM_STATIC=OFF"], 600)
    if rc != 0:
        sys.exit(f"mutate: configuring {build} failed:\n{out}")


def tests_for(path, given):
    if given:
        return given
    top = os.path.relpath(os.path.abspath(path), ROOT).split(os.sep)[0]
    return DEFAULT_TESTS.get(top, ".")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--build", default=os.path.join(ROOT, "build-mutate"))
    ap.add_argument("--per-file", type=int, default=8, help="mutants sampled per file (0: all)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tests", help="ctest -R regex (default: by folder, DEFAULT_TESTS)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per mutant's tests")
    ap.add_argument("--jobs", type=int, default=1, help="build and ctest jobs")
    ap.add_argument("--list", action="store_true", help="print the mutants, run nothing")
    ap.add_argument("--only", action="append", default=[], help="FILE:LINE:INDEX (repeatable)")
    ap.add_argument("--budget", type=float, default=0, help="stop after this many minutes")
    ap.add_argument("--apply", metavar="FILE:LINE:INDEX",
                    help="write that one mutant into FILE and exit (restoring it is the caller's job)")
    a = ap.parse_args()

    if a.apply:
        path, no, idx = a.apply.rsplit(":", 2)
        lines, ms = mutants_of(path)
        found = [m for m in ms if m[0] == int(no) and m[1] == int(idx)]
        if not found:
            sys.exit(f"mutate: {a.apply}: no such mutant (tools/mutate.py --list --per-file 0 {path})")
        _, _, new, what = found[0]
        lines[int(no) - 1] = new
        with open(path, "w") as f:
            f.write("\n".join(lines))
        print(f"{os.path.relpath(os.path.abspath(path), ROOT)}:{no}:{idx}: {what}: {new.strip()}")
        return 0

    plan = []  # (path, lines, (no, idx, new, what))
    if a.only:
        for spec in a.only:
            path, no, idx = spec.rsplit(":", 2)
            lines, ms = mutants_of(os.path.join(ROOT, path) if not os.path.isabs(path) else path)
            plan += [(path, lines, m) for m in ms if m[0] == int(no) and m[1] == int(idx)]
    for path in a.files:
        lines, ms = mutants_of(path)
        if a.per_file and len(ms) > a.per_file:
            ms = sorted(random.Random(f"{a.seed}:{os.path.relpath(path, ROOT)}").sample(ms, a.per_file))
        plan += [(path, lines, m) for m in ms]
    if a.list:
        for path, _, (no, idx, new, what) in plan:
            print(f"{os.path.relpath(path, ROOT)}:{no}:{idx}: {what}: {new.strip()}")
        return 0
    if not plan:
        sys.exit("mutate: no mutants (give source files)")

    configure(a.build)
    rc, out = run(["cmake", "--build", a.build, f"-j{a.jobs}"], 3600)
    if rc != 0:
        sys.exit(f"mutate: the unmutated tree does not build in {a.build}:\n{out}")

    killed, survived, stillborn, t0 = 0, [], 0, time.time()
    for n, (path, lines, (no, idx, new, what)) in enumerate(plan, 1):
        if a.budget and time.time() - t0 > a.budget * 60:
            print(f"mutate: budget of {a.budget} min spent after {n - 1} mutants", flush=True)
            break
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        with open(path, "rb") as f:
            original = f.read()
        mutated = lines[:]
        mutated[no - 1] = new
        try:
            with open(path, "w") as f:
                f.write("\n".join(mutated))
            brc, bout = run(["cmake", "--build", a.build, f"-j{a.jobs}"], 1800)
            # The mutated file not compiling is a stillborn mutant; a build that fails
            # later (tests/embed runs the just-built compiler at build time) killed it.
            base = os.path.basename(path)
            if brc != 0 and any(base + ":" in l and "error" in l for l in bout.splitlines()):
                verdict = "stillborn"
            elif brc != 0:
                verdict = "killed"
                why = [l for l in bout.splitlines() if "rror" in l][:1]
                print("   (by the build: %s)" % ("; ".join(why) or f"exit {brc}"), flush=True)
            else:
                trc, tout = run(["ctest", "--test-dir", a.build, "-j", str(a.jobs), "-R",
                                 tests_for(path, a.tests), "-LE", "gpu|perf", "--stop-on-failure",
                                 "--timeout", str(a.timeout)], a.timeout * 4)
                verdict = "killed" if trc != 0 else "SURVIVED"
        finally:
            with open(path, "wb") as f:
                f.write(original)
        if verdict == "stillborn":
            stillborn += 1
        elif verdict == "killed":
            killed += 1
        else:
            survived.append(f"{rel}:{no}:{idx}: {what}: {new.strip()}")
        print(f"[{n}/{len(plan)}] {verdict:9} {rel}:{no}:{idx}: {what}", flush=True)
    # leave the build dir matching the restored tree
    run(["cmake", "--build", a.build, f"-j{a.jobs}"], 3600)
    total = killed + len(survived)
    print(f"\nmutate: {killed} of {total} mutants killed"
          f" ({100.0 * killed / total if total else 0:.0f}%), {stillborn} stillborn")
    for s in survived:
        print("survivor:", s)
    return 0


if __name__ == "__main__":
    sys.exit(main())
