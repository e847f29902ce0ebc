#!/usr/bin/env python3
"""The benchmark report: builds the `bench` preset, runs W1-W6 (alloy_bench, and alloy_bench_mimalloc and
alloy_bench_phobos when built), counts instructions per op for W1 to W4 under callgrind, then writes the results
JSON, the page (ns/op and each stack's ratio to every anchor of the same run) and its chart (gnuplot).

By default everything goes to build/report/ (ignored by git): results/<date>.json, performance.md, performance.png,
and the last line says where. --publish writes the committed copies instead: benchmarks/results/<date>.json,
docs/performance.md and docs/performance.png. To regenerate the committed page from a committed run, without
running anything:

    tools/bench_report.sh --publish --from-json benchmarks/results/<date>.json

    tools/bench_report.sh [--reps N] [--no-build] [--no-callgrind] [--filter REGEX] [--build-dir DIR] [--jobs N]
                          [--publish] [--from-json FILE]
    tools/bench_report.sh --check-stacks [--build-dir DIR | --stacks-json FILE]

Stack names, labels and goals come from the stacks' descriptors (benchmarks/stacks.hpp), which every benchmark
binary exports with --list-stacks; the results JSON keeps them ("stacks"). --check-stacks checks them against this
script (the ctest bench_stack_names).

Only the standard library is used (python3 from Debian). docs/workloads.md defines the workloads.
"""
import argparse
import datetime
import glob
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["W1", "W2", "W3", "W4", "W5", "W6"]
W3_ARENAS = ["1MiB", "4MiB", "64MiB", "256MiB"]
CALLGRIND_N = {"W1": (50_000, 500_000), "W2": (10, 60), "W3": (100_000, 600_000), "W4": (50_000, 500_000)}
TITLES = {
    "W1": "W1 single-block churn (1 MiB arena, 64 B blocks, 10^7 allocate/deallocate pairs)",
    "W2": "W2 fill-drain (256 KiB arena, 4096 x 64 B, shuffled drain, 1000 rounds)",
    "W3": "W3 random steady state (4 MiB arena, 2048 slots, 1..512 B, 10^7 steps)",
    "W4": "W4 region bump (256 MiB, 10^6 x 16..256 B then deallocate_all, 20 rounds)",
    "W5": "W5 shared churn, 2 threads (1 MiB arena, 64 B, 2 x 5 x 10^6 pairs)",
    "W6": "W6 W3 through a growing AllocatorList of 1 MiB BitmappedBlock<64>s",
}


def log(msg):
    print(msg, flush=True)


def progress(msg):
    cols = shutil.get_terminal_size((120, 20)).columns
    if sys.stdout.isatty():
        sys.stdout.write("\r" + msg[: cols - 1].ljust(cols - 1))
    else:
        sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def progress_done():
    if sys.stdout.isatty():
        sys.stdout.write("\n")
        sys.stdout.flush()


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


# ---------------------------------------------------------------------------------------------------------------------
# Build

def build(build_dir, jobs):
    log("=== bench_report: configure and build (preset bench: Release, -O2) ===")
    cfg = ["cmake", "--preset", "bench"]
    if os.path.abspath(build_dir) != os.path.join(ROOT, "build", "bench"):
        cfg = ["cmake", "--preset", "bench", "-B", build_dir]
    r = subprocess.run(cfg + ["-DALLOY_BENCH_REPLAY=ON"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        # The replay tool (benchmarks/replay) is optional here: retry without it rather than lose the report.
        log(r.stdout[-3000:])
        log("bench_report: configure failed; retrying with -DALLOY_BENCH_REPLAY=OFF")
        run(cfg + ["-DALLOY_BENCH_REPLAY=OFF"], cwd=ROOT, stdout=subprocess.DEVNULL)
    help_out = subprocess.run(["cmake", "--build", build_dir, "--target", "help"], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True).stdout
    run(["cmake", "--build", build_dir, "-j", str(jobs), "--target", "alloy_bench"], cwd=ROOT)
    built = ["alloy_bench"]
    for t in ("alloy_bench_mimalloc", "alloy_bench_jemalloc", "alloy_bench_tcmalloc", "alloy_bench_phobos",
              "alloy-replay"):  # optional: a failure is noted, not fatal
        if re.search(r"^%s:" % t, help_out, re.M):
            if subprocess.run(["cmake", "--build", build_dir, "-j", str(jobs), "--target", t], cwd=ROOT).returncode == 0:
                built.append(t)
            else:
                log("bench_report: %s failed to build; its rows are left out" % t)
    return built


# ---------------------------------------------------------------------------------------------------------------------
# Running

def run_gbench(exe, reps, out_json, extra, tag):
    """Runs a Google Benchmark binary, showing a progress line per finished benchmark."""
    listed = subprocess.run([exe, "--benchmark_list_tests"] + extra, stdout=subprocess.PIPE, text=True,
                            check=True).stdout.splitlines()
    total = len(listed)
    if total == 0 or "Failed to match" in " ".join(listed):
        return {"benchmarks": [], "context": {}}
    cmd = [exe, "--benchmark_repetitions=%d" % reps, "--benchmark_report_aggregates_only=true",
           "--benchmark_out=" + out_json, "--benchmark_out_format=json", "--benchmark_color=false"] + extra
    done = 0
    t0 = time.time()
    progress("[%s 0/%d] starting" % (tag, total))
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
        for line in p.stdout:
            m = re.match(r"^(\S.*?)/iterations:1/manual_time%s\s" % ("_median" if reps > 1 else ""), line)
            if m:
                done += 1
                progress("[%s %d/%d, %.0fs] %s" % (tag, done, total, time.time() - t0, m.group(1)))
        rc = p.wait()
    progress_done()
    if rc != 0:
        raise SystemExit("bench_report: %s failed (exit %d)" % (exe, rc))
    with open(out_json) as f:
        return json.load(f)


def gbench_rows(data, source):
    rows = {}
    for b in data.get("benchmarks", []):
        # the median aggregate; with one repetition Google Benchmark writes no aggregates, so take the run itself
        if b.get("aggregate_name") != "median" and not (b.get("run_type") == "iteration" and
                                                       b.get("repetitions", 1) == 1):
            continue
        name = re.sub(r"/iterations:1/manual_time$", "", b["run_name"])
        row = {"ns_per_op": b["ns/op"], "label": b.get("label", "anchor"), "source": source,
               "failures": b.get("failures", 0), "repetitions": b.get("repetitions")}
        for k in ("peak_held_bytes", "peak_live_bytes"):
            if k in b:
                row[k] = b[k]
        rows[name] = row
    for b in data.get("benchmarks", []):  # the spread across repetitions: coefficient of variation of ns/op
        if b.get("aggregate_name") == "cv":
            name = re.sub(r"/iterations:1/manual_time$", "", b["run_name"])
            if name in rows:
                rows[name]["cv"] = b["ns/op"]
    return rows


def run_phobos(exe, reps, out_json):
    progress("[phobos] running W1-W5 over std.experimental.allocator")
    run([exe, "--reps=%d" % reps, "--out=" + out_json], stderr=subprocess.DEVNULL)
    progress_done()
    with open(out_json) as f:
        data = json.load(f)
    rows = {}
    for b in data["benchmarks"]:
        xs = b.get("samples") or []
        mean = sum(xs) / len(xs) if xs else 0
        cv = (sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) ** 0.5 / mean if len(xs) > 1 and mean else None
        rows[b["run_name"]] = {"ns_per_op": b["ns/op"], "label": "anchor", "source": "phobos", "cv": cv,
                               "failures": b.get("failures", 0), "repetitions": b.get("repetitions"),
                               "samples": b.get("samples")}
    return rows, data.get("context", {})


def callgrind_ir(exe, name, n, tmpdir, d_style=False):
    out = os.path.join(tmpdir, "cg.out")
    args = ["--callgrind=" + name, "--n=%d" % n] if d_style else ["--callgrind", name, str(n)]
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, exe] + args,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError("no totals in callgrind output")


def run_callgrind(exes, name_filter):
    """exes: [(binary, d_style)]; each lists its passes with --list-callgrind."""
    if not shutil.which("valgrind"):
        log("bench_report: valgrind not found; no instruction counts")
        return {}
    entries = []
    for exe, d_style in exes:
        listing = subprocess.run([exe, "--list-callgrind"], stdout=subprocess.PIPE, text=True, check=True).stdout
        for line in listing.splitlines():
            if line.strip():
                n, k = line.split("\t")
                if not name_filter or re.search(name_filter, n):
                    entries.append((exe, d_style, n, float(k)))
    res = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, (exe, d_style, name, ops_per_n) in enumerate(entries):
            w = name.split("/")[0]
            n1, n2 = CALLGRIND_N[w]
            progress("[callgrind %d/%d] %s" % (i + 1, len(entries), name))
            a = callgrind_ir(exe, name, n1, tmp, d_style)
            b = callgrind_ir(exe, name, n2, tmp, d_style)
            res[name] = {"instructions_per_op": (b - a) / ((n2 - n1) * ops_per_n), "n": [n1, n2], "ir": [a, b]}
    progress_done()
    return res


# ---------------------------------------------------------------------------------------------------------------------
# Machine

def git_state():
    def out(*cmd):
        r = subprocess.run(["git"] + list(cmd), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return r.stdout.rstrip("\n") if r.returncode == 0 else ""
    dirty = [l[3:] for l in out("status", "--porcelain", "--", "include", "building_blocks").splitlines()
             if l[3:].endswith(".hpp")]
    return {"commit": out("rev-parse", "--short", "HEAD"), "dirty_headers": dirty}


def machine_info():
    info = {"system": platform.platform(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split(":", 1)[1].split()[0])
            info["memory"] = "%.0f GiB RAM" % (kb / 1024 / 1024)
    except OSError:
        pass
    return info


def cpu_sample():
    """(busy CPU seconds of the whole machine, CPU seconds of this process and its waited-for children, wall time):
    two samples give how many CPUs other processes kept busy in between (the benchmark's own load excluded)."""
    busy = None
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + (v[4] if len(v) > 4 else 0)  # idle + iowait
        busy = (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        pass
    t = os.times()
    return busy, t.user + t.system + t.children_user + t.children_system, time.time()


def other_cpus(a, b):
    """CPUs used on average by processes other than the report and its children between samples a and b."""
    if a[0] is None or b[0] is None or b[2] <= a[2]:
        return None
    return max(0.0, ((b[0] - a[0]) - (b[1] - a[1])) / (b[2] - a[2]))


def load_sample():
    """The 1-minute load average and how many compilers (other engineers' builds) are running now."""
    try:
        with open("/proc/loadavg") as f:
            load = float(f.read().split()[0])
    except OSError:
        load = None
    compilers = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open("/proc/%s/comm" % pid) as f:
                    if f.read().strip() in ("cc1plus", "cc1", "ldc2", "cicc", "ptxas", "ld", "clang", "clang++"):
                        compilers += 1
            except OSError:
                pass
    return {"loadavg_1min": load, "compilers_running": compilers}


# ---------------------------------------------------------------------------------------------------------------------
# Report

def fmt_ns(x):
    if x is None:
        return "-"
    return "%.3g" % x if x < 100 else "%.0f" % x


def fmt_ratio(x):
    return "-" if x is None else ("%.2f" % x if x < 10 else "%.1f" % x)


def fmt_bytes(x):
    if x is None:
        return "-"
    for unit, d in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if x >= d:
            return "%.2f %s" % (x / d, unit)
    return "%d B" % x


def fmt_net(x):
    return "%.2f" % x if abs(x) < 10 else "%.1f" % x


def fmt_net_ratio(a, b):
    """net / net: only meaningful when the anchor's net is clearly above zero."""
    return "-" if b <= 0.05 else fmt_ratio(a / b) if a >= 0 else "< 0"


# ---------------------------------------------------------------------------------------------------------------------
# Stack descriptors: each stack's name, label (the short name used in column headers, goals and the chart), kind and
# goals live on its descriptor (benchmarks/stacks.hpp; the D stacks in benchmarks/phobos/phobos_bench.d). Every
# binary exports them (`--list-stacks`); the report merges the lists, stores them in the results JSON ("stacks") and
# takes labels, kinds and goals from there. What the report itself names (the summary's rows and columns, the
# instruction tables' columns, the method text) it names by label, and --check-stacks checks that every such label,
# and every stack a goal names, exists.

STACKS = {"binaries": [], "malloc_names": [], "not_built": [], "rows": [], "targets": []}
LABELS, KINDS, NAMES = {}, {}, {}  # name -> label, name -> kind, label -> name


def list_stacks(exes):
    """Runs `<exe> --list-stacks` for each binary and merges the lists."""
    return merge_stacks([json.loads(subprocess.run([exe, "--list-stacks"], stdout=subprocess.PIPE, text=True,
                                                   check=True).stdout) for exe in exes])


def merge_stacks(lists):
    """One descriptor list from several binaries' `--list-stacks` outputs (rows in order, each target once)."""
    out = {"binaries": [], "malloc_names": [], "not_built": [], "rows": [], "targets": []}
    for d in lists:
        out["binaries"].append(d["binary"])
        out["malloc_names"] += [n for n in d.get("malloc_names", []) if n not in out["malloc_names"]]
        out["not_built"] += [x for x in d.get("not_built", []) if x not in out["not_built"]]
        out["rows"] += [dict(r, binary=d["binary"]) for r in d["rows"]]
        for t in d.get("targets", []):
            if not any(all(t[k] == u[k] for k in ("stack", "workload", "check", "goal")) for u in out["targets"]):
                out["targets"].append(t)
    return out


def use_stacks(stacks):
    """Makes `stacks` (list_stacks' result) the descriptors the report reads."""
    global STACKS
    STACKS = stacks
    LABELS.clear()
    KINDS.clear()
    NAMES.clear()
    for r in stacks["rows"] + stacks["not_built"]:
        LABELS.setdefault(r["name"], r["label"])
        NAMES.setdefault(r["label"], r["name"])
        if "kind" in r:
            KINDS.setdefault(r["name"], r["kind"])
    for m in stacks["malloc_names"]:  # the malloc rows of the malloc binaries: named and labelled by the library
        LABELS.setdefault(m, m)
        NAMES.setdefault(m, m)
        KINDS.setdefault(m, "anchor")


def short(stack):
    """The stack's label (its name where no descriptor gives one)."""
    return LABELS.get(stack, stack)


def named(label):
    """The name of the stack whose label is `label` (None: no such stack in the descriptors)."""
    return NAMES.get(label)


def mallocs():
    """The general-purpose mallocs (anchors): the names of the malloc row in alloy_bench and the malloc binaries."""
    return STACKS["malloc_names"]


def kind(stack, r):
    """alloy, anchor (another library), floor, bound or loop (hand-written reference loops, not libraries)."""
    return KINDS.get(stack) or (r["label"] if r["label"] in ("alloy", "bound", "loop") else "anchor")


def null_row(runs, w):
    """The name of workload w's null row (kind loop: W3's loop alone), or None."""
    for n, r in runs.items():
        if split(n)[0] == w and r["label"] == "loop":
            return split(n)[1]
    return None


def net_base(runs, w):
    """The null row's ns/op for workload w (W3): the loop alone; None where the row did not run."""
    n = null_row(runs, w)
    return runs[w + "/" + n]["ns_per_op"] if n else None


def split(name):
    w, _, stack = name.partition("/")
    return w, stack


def workload_rows(runs, w):
    rows = [(split(n)[1], r) for n, r in runs.items() if split(n)[0] == w]
    # anchors first, then alloy's stacks; each group in registration order (dicts keep it)
    return [x for x in rows if x[1]["label"] == "anchor"] + [x for x in rows if x[1]["label"] != "anchor"]


def replay_rows(md):
    """{trace: {stack: (ns/op, peak held as printed)}} from alloy-replay's markdown."""
    out, trace = {}, None
    for line in (md or "").splitlines():
        m = re.match(r"^#+ (\S+\.csv)\s*$", line)
        if m:
            trace = m.group(1)
            out[trace] = {}
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if trace and len(cells) >= 3 and cells[0] not in ("stack", "") and not cells[0].startswith("---"):
            try:
                out[trace][cells[0]] = (float(cells[1]), cells[2])
            except ValueError:
                pass
    return out


# The goals: each one is a target on a stack's descriptor (benchmarks/stacks.hpp, `Target`); its `check` names one of
# the functions below, which measures it on this run and returns [(goal, measured, verdict)], verdict one of met,
# not met, within noise (a gap too small for this workload's run-to-run spread to decide), n/a.

def _ns(runs, w, stack):
    r = runs.get(w + "/" + stack)
    return r["ns_per_op"] if r else None


def _ipo(cg, w, stack):
    r = cg.get(w + "/" + stack)
    return r["instructions_per_op"] if r else None


def _verdict(ok):
    return "n/a" if ok is None else ("met" if ok else "not met")


def _refs(t):
    return list(zip(t["of"], t["factor"]))


def check_instructions_at_most(t, goal, runs, cg, replay_md):
    """instructions/op of the stack <= factor x the reference's (callgrind)."""
    w = t["workload"]
    a, f = _ipo(cg, w, t["stack"]), _ipo(cg, w, t["of"][0])
    return [(goal, "-" if a is None or f is None else "%.1f vs %.1f (%.2fx)" % (a, f, a / f),
             _verdict(None if a is None or f is None else a <= t["factor"][0] * f))]


def check_faster_than(t, goal, runs, cg, replay_md):
    """ns/op of the stack < factor x each reference's (those that ran); "within noise" when it is not, but every
    ratio is below factor x noise; with_instructions: the instruction counts beside."""
    w, stack = t["workload"], t["stack"]
    a = _ns(runs, w, stack)
    present = [(o, f, _ns(runs, w, o)) for o, f in _refs(t) if _ns(runs, w, o) is not None]
    if a is None or not present:
        return [(goal, "-", "n/a")]
    measured = ", ".join("%s %.2fx" % (short(o), a / b) for o, _, b in present)
    if t.get("with_instructions"):
        ia, irefs = _ipo(cg, w, stack), [(o, _ipo(cg, w, o)) for o in t["of"]]
        if ia is not None and all(v is not None for _, v in irefs):
            measured += "; instructions/op %.1f vs %s" % (ia, ", ".join("%s %.1f" % (short(o), v) for o, v in irefs))
    if all(a < f * b for _, f, b in present):
        v = "met"
    elif t.get("noise") and all(a < f * t["noise"] * b for _, f, b in present):
        v = "within noise"  # slower than one of them, but by less than the workload's run-to-run spread
    else:
        v = "not met"
    return [(goal, measured, v)]


def check_arena_sweep(t, goal, runs, cg, replay_md):
    """ns/op of the stack at every arena size of the sweep (the rows <workload>@<arena>): max <= factor x min."""
    w, stack = t["workload"], t["stack"]
    ws = []
    for r in STACKS["rows"]:
        if r["name"] == stack and r["workload"].startswith(w + "@") and r["workload"] not in ws:
            ws.append(r["workload"])
    sweep = [_ns(runs, x, stack) for x in ws]
    if not ws or any(x is None for x in sweep):
        return [(goal, "-", "n/a")]
    return [(goal, " / ".join("%.3g" % x for x in sweep) + " ns (max/min %.2fx)" % (max(sweep) / min(sweep)),
             _verdict(max(sweep) <= t["factor"][0] * min(sweep)))]


def _net(t, runs, cg):
    """(net value of a stack, value format) for the net_* checks: gross minus the workload's null row."""
    w, null = t["workload"], null_row(runs, t["workload"])
    if "_ns_" in t["check"]:
        base = net_base(runs, w)
        return (lambda s: None if _ns(runs, w, s) is None or base is None else _ns(runs, w, s) - base), "%.2f ns"
    base = None if null is None else _ipo(cg, w, null)
    return (lambda s: None if _ipo(cg, w, s) is None or base is None else _ipo(cg, w, s) - base), "%.1f"


def check_net_at_most(t, goal, runs, cg, replay_md):
    """the stack's net of the loop <= factor x the reference's (ns/op or instructions/op)."""
    net, fmt = _net(t, runs, cg)
    mine, ref = net(t["stack"]), net(t["of"][0])
    return [(goal, "-" if mine is None or ref is None else (fmt + " vs " + fmt + " (%sx)") % (
        mine, ref, fmt_ratio(mine / ref) if ref > 0 else "-"),
        "n/a" if mine is None or ref is None else ("met" if mine <= t["factor"][0] * ref else "not met"))]


def check_net_below(t, goal, runs, cg, replay_md):
    """the stack's net of the loop below each reference's (those that ran)."""
    net, fmt = _net(t, runs, cg)
    mine = net(t["stack"])
    others = [(o, net(o)) for o in t["of"] if net(o) is not None]
    return [(goal, "-" if mine is None or not others else ", ".join(
        ("%s " + fmt) % (short(o), v) for o, v in others) + (" vs " + fmt) % mine,
        "n/a" if mine is None or not others else ("met" if all(mine < v for _, v in others) else "not met"))]


def check_peak_held_at_most(t, goal, runs, cg, replay_md):
    """peak bytes held from the system (W6) <= factor x the reference's."""
    a, b = runs.get(t["workload"] + "/" + t["stack"]), runs.get(t["workload"] + "/" + t["of"][0])
    ha, hb = (a or {}).get("peak_held_bytes"), (b or {}).get("peak_held_bytes")
    return [(goal, "-" if not ha or not hb else "%s vs %s (%sx); peak live %s" % (
        fmt_bytes(ha), fmt_bytes(hb), fmt_ratio(ha / hb), fmt_bytes(a.get("peak_live_bytes"))),
        "n/a" if not ha or not hb else ("met" if ha <= t["factor"][0] * hb else "not met"))]


def check_replay_faster_than(t, goal, runs, cg, replay_md):
    """every shipped trace (alloy-replay's rows of the same names): ns/op < factor x the reference's; one goal per
    trace ({trace} in the goal)."""
    out = []
    for trace, rows in replay_rows(replay_md).items():
        a, b = rows.get(t["stack"]), rows.get(t["of"][0])
        out.append((goal.replace("{trace}", trace), "-" if not a or not b else
                    "%.1f vs %.1f ns/op (%sx); peak held %s vs %s" % (a[0], b[0], fmt_ratio(a[0] / b[0]), a[1], b[1]),
                    "n/a" if not a or not b else ("met" if a[0] < t["factor"][0] * b[0] else "not met")))
    return out


CHECKS = {
    "instructions_at_most": check_instructions_at_most,
    "faster_than": check_faster_than,
    "arena_sweep": check_arena_sweep,
    "net_ns_at_most": check_net_at_most,
    "net_instructions_at_most": check_net_at_most,
    "net_ns_below": check_net_below,
    "net_instructions_below": check_net_below,
    "peak_held_at_most": check_peak_held_at_most,
    "replay_faster_than": check_replay_faster_than,
}


def targets(runs, cg, replay_md=None):
    """The speed goals alloy sets itself (the targets on the stacks' descriptors), checked on this run:
    [(goal, measured, verdict)], in the order the descriptors list them."""
    out = []
    for t in STACKS["targets"]:
        if t["check"] not in CHECKS:
            raise SystemExit("bench_report: goal '%s' of %s: unknown check '%s' (known: %s)" % (
                t["goal"], t["stack"], t["check"], ", ".join(CHECKS)))
        out += CHECKS[t["check"]](t, t["goal"].replace("{label}", short(t["stack"])), runs, cg, replay_md)
    return out


W6_PROTOCOL = """\
W6 runs W3's steps through an `AllocatorList` that starts empty and adds 1 MiB `BitmappedBlock<64>`s on demand, and
through the showcase `GeneralPurpose` ([cookbook.md](cookbook.md#7-a-general-purpose-allocator-in-one-type));
peak held is what the allocator holds from the system, peak live what the workload holds
([workloads.md](workloads.md#w6-in-detail) says how each is counted).
"""

# "How it is measured". {name:<label>} is the name of the stack with that label; {reps}, {cg_n} and the {w...}
# figures come from the run being reported (method_figures), so the text quotes no other day's numbers.
METHOD = """\
## How it is measured
- Workloads W1-W6 exactly as [workloads.md](workloads.md) defines them. One benchmark
  iteration is one whole workload run; the allocator is constructed before the clock starts and destroyed after it
  stops; **ns/op** = timed wall time / ops, where an allocate (failed or not) and a deallocate each count as one op
  (W4's deallocate_all counts as one op); the table shows the **median of {reps} repetitions**.
- Everything compiled for the benchmarks (alloy's stacks, the floors, the anchors' loops) is built with Intel's
  mitigation of the JCC erratum (`-Wa,-mbranches-within-32B-boundaries`, option `ALLOY_BENCH_JCC_ALIGN`, on by
  default on x86-64): on this machine's Xeon (Skylake-SP family) a loop whose branches cross 32-byte boundaries runs
  from the legacy decoders, so without it a row's time follows where its branches land, which unrelated edits move
  (the same W3 stack measured 10.25 and 11.25 ns per step in two builds of one source). The mallocs are prebuilt
  libraries and keep their own code.
- One byte is written into every block and its address folded into a sink; each allocator object escapes before the
  loop, so that no stack (the hand-written floors included) keeps its state in registers across the byte stores.
- Anchors run in the same binary and the same run (mimalloc, jemalloc, tcmalloc: the same code linked against
  libmimalloc, libjemalloc or libtcmalloc_minimal, which override malloc, checked at start-up; Phobos: the same
  workloads in D, `ldc2 -O2 -release`, run by the same report right after). **Compare ratios, not absolute times**: on a shared machine a cell can move 30-100% between runs.
- W4's stacks that work over a caller's memory (Region<>, pmr monotonic, foonathan memory_stack through a span block
  allocator, the bump pointer, D's Region) share one 256 MiB arena touched once before any timing; glibc malloc has
  no deallocate_all, so its adapter records each pointer (in a vector reserved beforehand) and frees them one by one.
- W1/W2's pmr and foonathan pools grow from the heap (no fixed arena); foonathan's memory_pool gets one block sized
  for the arena's 16384 (W1) or 4096 (W2) nodes.
- Debian's libbenchmark prints "Library was built as DEBUG": that concerns Google Benchmark's own bookkeeping, not
  the timed regions, which alloy_bench times itself (steady_clock, reported as manual time).
- **Instructions per op** (callgrind): `alloy_bench --callgrind <W>/<stack> <n>` runs one untimed pass (W1: n
  pairs; W2: n rounds of 8192 ops; W3: n steps; W4: one round of n allocations and the deallocate_all); the report
  runs it under `valgrind --tool=callgrind` for two values of n ({cg_n}) and
  divides the difference in instructions by the difference in ops, so construction and start-up cancel out. They include the loop's own
  instructions (the generator for W3 and W4, the byte store and the sink). For malloc on W4, an op includes the
  free() its deallocate_all does for that block.
- **W5's glibc anchor can be bimodal**: from one process to the next of the same binary, its median can land in
  one of two modes far apart. SharedBitmappedBlock takes two locked instructions per allocate/deallocate pair
  (glibc's tcache takes none), and each thread starts its single-block search at a word of its own, so the two
  threads seldom share a cache line: W5 measures the locked instructions more than contention. The "within 1.5x of
  glibc" goal is checked on this run{w5_glibc}.
- **W4's time is mostly memory traffic**: the byte written into every fresh block of the 256 MiB region.
  `Region<>` and the bump-pointer floor run {w4_instructions}{w4_times}: time gaps of a few percent between
  the W4 rows are noise, and the instruction counts are the firmer comparison.
- **The W1 floors are floors in instructions, not in time**: their loops carry a null test that BitmappedBlock's
  does not, so BitmappedBlock can run faster than both{w1_times}. The 1.2x goals are checked on instructions.
- **W1 has two floors.** Both keep one 64-bit bitmap word in the object and take its first free bit with
  std::countr_one. "{name:floor (1 word, arena)}" hands out the first 64 blocks of the W1 arena, held by
  pointer as any allocator over an arena holds it ({w1_arena_ipo}[workloads.md](workloads.md) counts 14.5 for this
  kind of floor). "{name:floor (1 word)}" keeps its 64 blocks in an inline array at a fixed offset from the
  word, so the compiler folds deallocate's `(p - mem) >> 6` back into the index it just allocated{w1_inline_ipo}; no
  allocator over a caller's memory can do that. BitmappedBlock's goal (at most 1.2x the floor's instructions) is
  checked against both.
- **W3 has a design floor.** "{name:floor (summary)}" (benchmarks/w3_floor.hpp) is BitmappedBlock's
  search with nothing else: the same bitmap, the same summary byte per word (exact after an allocation and after a
  free inside one word), the same 64-byte SSE2 step, exact first fit (tests/w3_floor.cpp checks that it hands out
  BitmappedBlock's offsets and failures in lockstep), but no fresh cursor, no hint-word fast paths or snapshot, no
  ownership checks and no size dispatch.
  BitmappedBlock's distance to it is what alloy's extras cost; its own distance to glibc malloc is what this search
  structure costs (docs/design_notes.md, "The bounds that show W3's limit").
- **W3 has a null row** ("{name:null (loop)}", kind *loop*): every request gets the same
  static buffer, so the row is W3's loop alone (the generator, the slot loads, the 50% unpredictable branch on the
  slot, the byte write and the sink). W3's table and its instruction counts give every stack gross and **net** of
  it (net = gross - null); the "net vs" columns divide nets. Nets are differences of two medians of one run: on a
  loaded machine a net below about 1 ns/op is within the noise, and the instruction counts are the firm figure.
- **W3 has two bounds below the floor** (kind "bound"; `GivenFitsBound` in benchmarks/w3_floor.hpp): the floor with
  every first fit given in advance (recorded from the floor on the same sequence before the clock starts), so that
  no search runs. "{name:bound (upkeep)}" still keeps the bitmap, the exact summary bytes and the
  hint as the floor does; "{name:bound (bitmap)}" keeps the bitmap alone (tests/w3_floor.cpp checks
  both against the floor in lockstep). The floor minus the first is what the search costs; the first minus the
  second is what the summary's upkeep costs; and no allocator that keeps such a summary runs faster than the first
  (docs/design_notes.md, "The bounds that show W3's limit").
  D's rows come from `alloy_bench_phobos --callgrind=<W>/<stack> --n=<n>`, the same protocol.
- **Names, labels and goals live once, on the stacks' descriptors** (benchmarks/stacks.hpp; the D stacks in
  benchmarks/phobos/phobos_bench.d). A descriptor carries the stack's name (its benchmark's and this page's), its
  label (the short name in the "vs" columns, the goals and the chart) and the goals checked on it, which name the
  stacks they compare with through those stacks' descriptors. Every benchmark binary exports its descriptors as JSON
  (`alloy_bench --list-stacks`); the report stores them in the results file ("stacks") and takes labels, kinds and
  goals from there, so a renamed stack keeps its goals. The ctest `bench_stack_names` (`tools/bench_report.sh
  --check-stacks`) fails when a stack has no label or shares one, when a goal names a stack that does not run in
  its workload (alloy-replay's `--list` for the replay goals), and when a label this page names (the summary, the
  instruction tables, this text) no longer exists. The report makes the same check on the binaries it is about to
  run before it measures anything, and the test command (which builds no benchmarks) makes it against the
  descriptors of the last published results (the ctest `bench_report_labels`).
"""


# The stacks method_figures quotes (labels, checked by --check-stacks).
METHOD_FIGURE_LABELS = {"W1": ("alloy BB single", "floor (1 word, arena)", "floor (1 word)"),
                        "W4": ("alloy Region<>", "floor (bump)"), "W5": ("glibc malloc",)}


def method_figures(res):
    """The figures the method text quotes, from the run being reported ("" where the run lacks them)."""
    runs, cg = res["runs"], res["callgrind"]

    def ns(w, label):
        assert label in METHOD_FIGURE_LABELS[w]
        return _ns(runs, w, named(label) or label)

    def ipo(w, label):
        assert label in METHOD_FIGURE_LABELS[w]
        return _ipo(cg, w, named(label) or label)

    f = {"reps": str(res["repetitions"])}
    f["cg_n"] = "; ".join("%s: %d and %d" % (w, a, b) for w, (a, b) in CALLGRIND_N.items())
    g = ns("W5", "glibc malloc")
    f["w5_glibc"] = "" if g is None else " (glibc malloc: %s ns/op, so the threshold is %s ns/op)" % (
        fmt_ns(g), fmt_ns(1.5 * g))
    ri, fi = ipo("W4", "alloy Region<>"), ipo("W4", "floor (bump)")
    f["w4_instructions"] = ("nearly the same number of instructions per op" if ri is None or fi is None else
                            "the same %.1f instructions per op" % ri if round(ri, 1) == round(fi, 1) else
                            "%.1f and %.1f instructions per op" % (ri, fi))
    rn, fn = ns("W4", "alloy Region<>"), ns("W4", "floor (bump)")
    f["w4_times"] = "" if rn is None or fn is None else "; in this run their medians are %s and %s ns/op (%.2fx)" % (
        fmt_ns(rn), fmt_ns(fn), rn / fn)
    b, fa, fw = ns("W1", "alloy BB single"), ns("W1", "floor (1 word, arena)"), ns("W1", "floor (1 word)")
    f["w1_times"] = "" if None in (b, fa, fw) else (
        " (in this run %s takes %.2fx the time of the arena floor and %.2fx that of the inline one)" % (
            named("alloy BB single"), b / fa, b / fw))
    a, i = ipo("W1", "floor (1 word, arena)"), ipo("W1", "floor (1 word)")
    f["w1_arena_ipo"] = "" if a is None else "%.1f instructions per op in this run; " % a
    f["w1_inline_ipo"] = "" if i is None else " (%.1f per op)" % i
    return f


def method_text(res):
    f = method_figures(res)
    text = re.sub(r"\{name:([^}]+)\}", lambda m: named(m.group(1)) or m.group(1), METHOD)
    return re.sub(r"\{(\w+)\}", lambda m: f[m.group(1)], text)


# The 30-second summary: one row per use, the alloy stack for it, and its speed against each anchor family on the
# workload that models that use. Anchors absent from a run show "-". Stacks are named by label (checked by
# --check-stacks, so that a renamed label cannot drop a row or a column unnoticed).
SHOWCASE = "alloy GeneralPurpose"
SUMMARY = [
    ("many objects of one small size, one thread (nodes, messages): allocate and free at once", "alloy BB single",
     "W1"),
    ("the same, filled up then freed in random order", "alloy BB single", "W2"),
    ("objects of mixed sizes (1-512 B), general purpose: grows on demand, malloc for large blocks", SHOWCASE, "W3"),
    ("objects of mixed sizes (1-512 B) in one fixed arena", "alloy BB multi", "W3"),
    ("many objects freed all at once (per frame, per request)", "alloy Region<>", "W4"),
    ("one pool of small objects shared by threads", "alloy SharedBB single", "W5"),
    ("mixed sizes in a pool that grows on demand", "alloy AllocatorList", "W6"),
]
SUMMARY_ANCHORS = [  # (column, {workload: label}, the binary that runs those stacks)
    ("glibc malloc", {w: "glibc malloc" for w in WORKLOADS}, "alloy_bench"),
    ("mimalloc", {w: "mimalloc" for w in WORKLOADS}, "alloy_bench_mimalloc"),
    ("jemalloc", {w: "jemalloc" for w in WORKLOADS}, "alloy_bench_jemalloc"),
    ("tcmalloc", {w: "tcmalloc" for w in WORKLOADS}, "alloy_bench_tcmalloc"),
    ("std::pmr", {"W1": "pmr unsync pool", "W2": "pmr unsync pool", "W3": "pmr unsync pool", "W4": "pmr monotonic",
                  "W5": "pmr sync pool"}, "alloy_bench"),
    ("foonathan", {"W1": "foonathan pool", "W2": "foonathan pool", "W4": "foonathan stack"}, "alloy_bench"),
    ("D", {"W1": "D BB single", "W2": "D BB single", "W3": "D BB multi", "W4": "D Region", "W5": "D SharedBB single"},
     "alloy_bench_phobos"),
]
PRETTY = {
    "alloy BB single": "`BitmappedBlock<64, 64, Mallocator, Multiblock::no>`",
    "alloy BB multi": "`BitmappedBlock<64, 64, Mallocator>`",
    "alloy SharedBB single": "`SharedBitmappedBlock<64, 64, Mallocator, Multiblock::no>`",
    "alloy Region<>": "`Region<>` over a buffer",
    "alloy AllocatorList": "`AllocatorList` of 1 MiB `BitmappedBlock<64>`s",
    SHOWCASE: "`GeneralPurpose`: 20 size classes that borrow from larger ones, over `Region`s with a capacity map, "
              "malloc above 512 B ([cookbook](cookbook.md))",
}
# The instruction tables' ratio columns, per workload (labels).
CG_COLUMNS = {"W1": ("floor (1 word, arena)", "floor (1 word)"), "W2": ("foonathan pool", "glibc malloc"),
              "W3": ("glibc malloc", "floor (summary)"), "W4": ("floor (bump)",)}


def summary_gp_line(runs):
    """The showcase in one sentence: W3 gross and net of the loop against each malloc, W6's memory, the traces."""
    g, null = runs.get("W3/%s" % named(SHOWCASE)), net_base(runs, "W3")
    if not g or null is None:
        return None
    parts = []
    for m in mallocs():
        a = runs.get("W3/" + m)
        if a:
            net_a = a["ns_per_op"] - null
            parts.append("%s %s (net of the loop: %s)" % (
                m, speed_words(g["ns_per_op"] / a["ns_per_op"]),
                speed_words((g["ns_per_op"] - null) / net_a) if net_a > 0.05 else "-"))
    return ("- **General purpose**: `GeneralPurpose` on W3 against %s. W3's loop itself (RNG, slot loads, branch, "
            "byte write) takes %s ns of every step (the null row), so the gross ratios understate the allocators' "
            "differences." % ("; ".join(parts), fmt_net(null)))


def speed_words(ratio):
    """stack/anchor ns ratio in words: '4.2x faster', '1.35x slower', 'same speed' (within 5%)."""
    if ratio is None:
        return "-"
    if ratio < 0.95:
        f = 1 / ratio
        return ("%.1fx" % f if f < 10 else "%.0fx" % f) + " faster"
    if ratio > 1.05:
        return ("%.2fx" % ratio if ratio < 10 else "%.0fx" % ratio) + " slower"
    return "same speed"


def summary_section(runs):
    def ratio(w, stack, anchor):
        a, b = runs.get(w + "/" + stack), runs.get(w + "/" + anchor) if anchor else None
        return a["ns_per_op"] / b["ns_per_op"] if a and b and b["ns_per_op"] else None

    L = ["## In 30 seconds", ""]
    L.append("Which alloy stack to use for what, and its speed against each alternative in this run (time per "
             "operation; *2.0x faster* means half the time). Each row is measured on the workload that models that "
             "use; \"-\": no such anchor in this workload or this run.")
    L.append("")
    L.append("| if you need | use | workload | " + " | ".join("vs " + n for n, _, _ in SUMMARY_ANCHORS) + " |")
    L.append("|---|---|---|" + "---|" * len(SUMMARY_ANCHORS))
    slower, faster = [], []
    for need, label, w in SUMMARY:
        stack = named(label)
        if stack is None or w + "/" + stack not in runs:
            continue
        cells = []
        for name, per_w, _ in SUMMARY_ANCHORS:
            r = ratio(w, stack, named(per_w.get(w)))
            cells.append(speed_words(r))
            if r is not None and name in mallocs() and label != SHOWCASE:  # the showcase has its own line
                (slower if r > 1.05 else faster if r < 0.95 else []).append((w, name, r))
        L.append("| %s | %s | [%s](workloads.md#the-workloads) | %s |" % (
            need, PRETTY.get(label, stack), w, " | ".join(cells)))
    L.append("")
    if faster:
        ws = sorted({w for w, _, _ in faster})
        L.append("- **Faster than the general-purpose mallocs** on %s: where the sizes are fixed, or memory is "
                 "freed all at once, a stack built for the job beats glibc malloc and mimalloc." % ", ".join(ws))
    gp = summary_gp_line(runs)
    if gp:
        L.append(gp)
    if slower:
        ws = sorted({w for w, _, _ in slower})
        L.append("- **Slower** (%s): those stacks are built for one pattern, not as general-purpose mallocs; for "
                 "mixed sizes use the `GeneralPurpose` composition above, or alloy for what malloc does not give (an "
                 "arena of your own, `owns`, freeing everything at once, device memory)." % "; ".join(
                     "%s %s than %s" % (w, speed_words(r), n) for w, n, r in slower))
    L.append("- std::pmr is the C++ standard's pool (W1-W3, W5) or monotonic (W4) resource, foonathan is "
             "foonathan/memory's `memory_pool` (W1, W2) or `memory_stack` (W4), and D is the same workload written "
             "in D over `std.experimental.allocator`. GPU stacks are not measured here (no GPU on this machine).")
    L.append("")
    return L


def load_text(res):
    """The load line: whether anything but the benchmark ran. The benchmark itself keeps one CPU busy (two during
    W5), so the load average alone cannot tell; the CPU time other processes took can (recorded since it exists)."""
    ld = res["load"]
    comp = [x.get("compilers_running", 0) for x in ld]
    other = res.get("other_cpus")
    if other is not None:
        loaded = other > 0.3 or any(comp)
        text = ("other processes kept %.2f CPUs busy on average while the benchmarks ran (the benchmark's own "
                "load is not counted); compilers of other builds running at the three samples: %s." %
                (other, " / ".join(str(c) for c in comp)))
    else:
        loaded = any(comp)
        text = ("1-minute load average %s at the start, after alloy_bench and at the end (the benchmark itself keeps "
                "one CPU busy, two during W5); compilers of other builds running then: %s." % (
                    " / ".join(str(x["loadavg_1min"]) for x in ld), " / ".join(str(c) for c in comp)))
    if loaded:
        return text + (" **Other work ran during this run: absolute ns/op are inflated and noisier than usual; "
                       "compare the ratios within the run.**")
    return text + " Nothing else was running."


def write_markdown(res, path, chart_rel, json_rel):
    runs, cg = res["runs"], res["callgrind"]
    reps = res["repetitions"]
    mi = res["machine"]
    L = []
    L.append("# Performance")
    L.append("")
    L.append("How fast alloy's stacks run against what you would otherwise use: glibc malloc, mimalloc, jemalloc, "
             "tcmalloc, the C++ standard's `std::pmr` resources, foonathan/memory and D's `std.experimental."
             "allocator` (the design alloy follows), on the six workloads of [workloads.md](workloads.md). Every "
             "figure on this page comes from one run (%s, %s CPUs); the page is generated by `tools/bench_report.py` from "
             "[its results](%s) and is not edited by hand." % (res["date"], mi.get("cpus"), json_rel))
    L.append("")
    L.extend(summary_section(runs))
    L.append("![ns/op per workload](%s)" % chart_rel)
    L.append("")
    L.append("## This run")
    L.append("")
    L.append("**Command:** `%s` (%s; median of %d repetitions), at commit %s. Raw data: [%s](%s)." % (
        res["command"], res["build"], reps, res["git"]["commit"], os.path.basename(json_rel), json_rel) +
        ("" if not res.get("regenerated_with") else " This page was regenerated from those results with `%s`."
         % res["regenerated_with"]))
    L.append("")
    L.append("**Machine:** %s, %s CPUs, %s, %s. Compiler: %s." % (mi.get("cpu", "?"), mi.get("cpus"),
             mi.get("memory", "?"), mi.get("system"), res["context"].get("alloy.compiler", "?")))
    L.append("")
    L.append("**Load:** " + load_text(res))
    notes = res["notes"]
    if notes:
        L.append("")
        L.append("**Notes on this run:** " + "; ".join(notes) + ".")
    L.append("")
    L.append("In the tables below, ratios are `stack ns/op / anchor ns/op` in the same run: below 1.00 the stack is "
             "faster than that anchor. ns/op is the median; ±x% is the coefficient of variation across the "
             "repetitions. Kind *anchor* is another library, *floor*, *bound* and *loop* (W3's null row) are "
             "hand-written reference loops (not libraries; [workloads.md](workloads.md#reference-loops-floors-and-"
             "bounds)), *alloy* is alloy.")
    L.append("")

    for w in WORKLOADS:
        rows = workload_rows(runs, w)
        L.append("## " + TITLES[w])
        L.append("")
        if not rows:
            L.append("No stack ran (filtered out, or its blocks are not written yet).")
            L.append("")
            continue
        anchors = [s for s, r in rows if r["label"] == "anchor"]
        null = net_base(runs, w)
        net_anchors = [m for m in mallocs() if w + "/" + m in runs] if null is not None else []
        if null is not None:  # W3: every row gross and net of the loop (the null row's ns/op)
            L.append("| stack | kind | ns/op | net ns/op | vs " + " | vs ".join(short(a) for a in anchors) +
                     "".join(" | net vs %s" % short(m) for m in net_anchors) + " | failures |")
            L.append("|---|---|--:|--:|" + "--:|" * (len(anchors) + len(net_anchors)) + "--:|")
        elif w == "W6":
            L.append("| stack | kind | ns/op | vs " + " | vs ".join(short(a) for a in anchors) +
                     " | peak held | peak live | held / live | failures |")
            L.append("|---|---|--:|" + "--:|" * len(anchors) + "--:|--:|--:|--:|")
        else:
            L.append("| stack | kind | ns/op | vs " + " | vs ".join(short(a) for a in anchors) + " | failures |")
            L.append("|---|---|--:|" + "--:|" * len(anchors) + "--:|")
        for s, r in rows:
            ratios = [fmt_ratio(r["ns_per_op"] / runs[w + "/" + a]["ns_per_op"]) for a in anchors]
            k = kind(s, r)
            k = k if r["source"] == "alloy_bench" else "%s (%s)" % (k, r["source"])
            name = "**%s**" % s if r["label"] == "alloy" else s
            cv = r.get("cv")
            cells = [name, k, fmt_ns(r["ns_per_op"]) + ("" if cv is None else " ±%.0f%%" % (100 * cv))]
            if null is not None:
                net = r["ns_per_op"] - null
                cells.append(fmt_net(net))
                ratios += [fmt_net_ratio(net, runs[w + "/" + m]["ns_per_op"] - null) for m in net_anchors]
            cells += ratios
            if w == "W6":
                held, live = r.get("peak_held_bytes"), r.get("peak_live_bytes")
                cells += [fmt_bytes(held), fmt_bytes(live), fmt_ratio(held / live) if held and live else "-"]
            cells.append("%d" % r["failures"])
            L.append("| " + " | ".join(cells) + " |")
        absent = [n for n in notes if ("foonathan" in n and w in ("W1", "W2", "W4")) or
                  ("Phobos" in n and w in ("W1", "W2", "W3", "W4", "W5")) or
                  any(("no %s anchor" % lib) in n for lib in ("mimalloc", "jemalloc", "tcmalloc"))]
        if absent:
            L.append("")
            L.append("Not in this table: " + "; ".join(absent) + ".")
        L.append("")
        if w == "W3":
            sweep_stacks = sorted({split(n)[1] for n in runs if n.startswith("W3@")})
            if sweep_stacks:
                L.append("W3 at 1, 4, 64 and 256 MiB arenas (the goal: ns/op within 1.5x from the smallest to "
                         "the largest):")
                L.append("")
                L.append("| stack | " + " | ".join(W3_ARENAS) + " | max / min | failures at 1 MiB |")
                L.append("|---|" + "--:|" * len(W3_ARENAS) + "--:|--:|")
                for s in sweep_stacks:
                    xs = [runs.get("W3@%s/%s" % (a, s), {}).get("ns_per_op") for a in W3_ARENAS]
                    have = [x for x in xs if x is not None]
                    L.append("| %s | %s | %s | %s |" % (s, " | ".join(fmt_ns(x) for x in xs),
                             fmt_ratio(max(have) / min(have)) if have else "-",
                             "%d" % runs["W3@1MiB/" + s]["failures"] if "W3@1MiB/" + s in runs else "-"))
                L.append("")
        if w == "W6":
            L.append(W6_PROTOCOL)

    L.append("## Instructions per op (callgrind), W1 to W4")
    L.append("")
    if not cg:
        L.append("Not measured in this run (valgrind missing or --no-callgrind).")
    else:
        for w, labels in CG_COLUMNS.items():
            floors = [named(x) or x for x in labels]
            items = [(split(n)[1], v["instructions_per_op"]) for n, v in cg.items() if split(n)[0] == w]
            items.sort(key=lambda it: runs.get(w + "/" + it[0], {}).get("label", "anchor") != "anchor")
            if not items:
                continue
            fls = [cg.get(w + "/" + f, {}).get("instructions_per_op") for f in floors]
            cg_null = cg.get("%s/%s" % (w, null_row(runs, w)), {}).get("instructions_per_op")
            if cg_null is None:
                L.append("| %s stack | instructions / op | %s |" % (w, " | ".join("vs " + short(f) for f in floors)))
                L.append("|---|--:|%s" % ("--:|" * len(floors)))
            else:  # W3: net of the loop too (the null row's count)
                L.append("| %s stack | instructions / op | net of the loop | %s |" % (
                    w, " | ".join("vs " + short(f) for f in floors)))
                L.append("|---|--:|--:|%s" % ("--:|" * len(floors)))
            for s, v in items:
                net = "" if cg_null is None else " %.1f |" % (v - cg_null)
                L.append("| %s | %.1f |%s %s |" % (s, v, net,
                                                   " | ".join(fmt_ratio(v / fl) if fl else "-" for fl in fls)))
            L.append("")
    if res.get("replay_markdown"):
        L.append("## Trace replay (alloy-replay, shipped traces; see [replay.md](replay.md))")
        L.append("")
        L.append("`alloy-replay --repetitions %d benchmarks/replay/traces/*.csv`, in the same run:" % reps)
        L.append("")
        L.append(res["replay_markdown"])
        L.append("")
    L.append("## Device memory (D1-D3)")
    L.append("")
    L.append("The device benchmark (host ns per allocate + deallocate pair of GPU memory, against cudaMalloc, "
             "cudaMallocAsync and RAPIDS RMM) is a separate binary, `device_bench`, run by `tools/main.sh` where a "
             "GPU is present and over the CPU stand-in for the CUDA runtime where none is: its figures, the date "
             "and device of the last run, and how to add RMM's rows are in [device_performance.md]"
             "(device_performance.md).")
    L.append("")
    L.append("## Goals checked on this run")
    L.append("")
    L.append("alloy's own speed goals for its blocks (their pages say why each was set; BB = BitmappedBlock, "
             "single / multi = Multiblock::no / yes). *within noise*: the gap is smaller than the workload's "
             "run-to-run spread, so this run cannot decide.")
    L.append("")
    L.append("| goal | measured | verdict |")
    L.append("|---|---|---|")
    for t, m, v in targets(runs, cg, res.get("replay_markdown")):
        L.append("| %s | %s | %s |" % (t, m, v))
    L.append("")
    L.append(method_text(res))
    L.append("## Reproduce")
    L.append("")
    L.append("```sh")
    L.append("tools/bench_report.sh             # the whole report into build/report/ (builds preset bench, runs "
             "everything: about 3 minutes on 2 quiet CPUs)")
    L.append("tools/bench_report.sh --publish --from-json benchmarks/results/<date>.json   # this page, from a "
             "committed run")
    L.append("cmake --preset bench && cmake --build --preset bench --target alloy_bench")
    L.append("build/bench/benchmarks/alloy_bench --benchmark_filter='^W1/'   # one workload, 5 repetitions")
    L.append("valgrind --tool=callgrind build/bench/benchmarks/alloy_bench --callgrind 'W1/glibc malloc' 500000")
    L.append("```")
    L.append("")
    L.append("Adding a stack: one descriptor in benchmarks/stacks.hpp (name, label, goals if any) and its name in the "
             "Mp11 list of each workload (see the comment at the top of that file); then `ctest --test-dir build/bench "
             "-L bench`.")
    text = "\n".join(L) + "\n"
    # The text links docs/ pages by their names (docs/performance.md's place); a report written elsewhere
    # (build/report/) gets the links re-rooted so that they still resolve.
    docs_rel = os.path.relpath(os.path.join(ROOT, "docs"), os.path.dirname(os.path.abspath(path)))
    if docs_rel != ".":
        text = re.sub(r"\]\(([a-z_]+\.md)", lambda m: "](%s/%s" % (docs_rel, m.group(1)), text)
    with open(path, "w") as f:
        f.write(text)


PANEL = {  # each panel's workload parameters (docs/workloads.md)
    "W1": ("W1 single-block churn", "1 MiB arena, 64 B blocks; 10^7 allocate + free pairs"),
    "W2": ("W2 fill-drain", "256 KiB arena: 4096 x 64 B, freed in shuffled order; 1000 rounds"),
    "W3": ("W3 random steady state", "4 MiB arena, 64 B blocks; 2048 slots of 1-512 B; 10^7 random steps"),
    "W4": ("W4 region bump", "256 MiB region; 10^6 x 16-256 B, then free all at once; 20 rounds"),
    "W5": ("W5 shared churn, 2 threads", "1 MiB arena, 64 B blocks; 2 threads x 5x10^6 allocate + free pairs"),
    "W6": ("W6 W3 through a growing list", "W3's steps; AllocatorList adding 1 MiB BitmappedBlock<64>s on demand"),
}
CHART_STYLE = {  # kind -> (colour, fill style, legend)
    "alloy": ("#3366CC", "solid 0.85 border rgb '#1F3F7F'", "alloy stack"),
    "anchor": ("#9A9A9A", "solid 0.85 border rgb '#555555'",
               "other library (glibc, mimalloc, jemalloc, tcmalloc, std::pmr, foonathan, D)"),
    "ref": ("#E08A2E", "pattern 4 border rgb '#B05F10'",
            "hand-written reference loop (floor / bound / null): not a library, the least work the workload needs"),
}
ABBREVIATIONS = (
    "BB = BitmappedBlock, SharedBB = SharedBitmappedBlock; single / multi = Multiblock::no / yes (one block per "
    "request / runs of blocks). pmr = std::pmr (unsync / sync pool, monotonic). foonathan = foonathan/memory.",
    "D = the same workload in the D language over std.experimental.allocator (Phobos), the design alloy follows.",
    "floor (1 word) = one bitmap word with its blocks inline; floor (1 word, arena) = the same over the W1 arena; "
    "floor (bump) = a bump pointer; floor (summary) = BitmappedBlock search alone.",
    "bound (upkeep) / bound (bitmap) = the W3 floor with every first fit given in advance, keeping bitmap and summary "
    "/ the bitmap only. The workloads: docs/workloads.md",
    "null (loop) = W3 with one static buffer for every request: the loop alone. alloy GeneralPurpose = 20 size "
    "classes borrowing from larger ones over regions with a capacity map, malloc above 512 B (docs/cookbook.md).",
)


def write_chart(res, png):
    if not shutil.which("gnuplot"):
        return "gnuplot not found: no chart"
    runs = res["runs"]

    def q(t):
        return t.replace("'", "")

    with tempfile.TemporaryDirectory() as tmp:
        script = ["set terminal pngcairo size 1600,1150 font 'Sans,9'" if has_pngcairo() else
                  "set terminal png size 1600,1150",
                  "set output '%s'" % png,
                  "set multiplot layout 2,3 title 'alloy against other allocators: ns per operation, median of %d "
                  "repetitions, one run (%s); lower is better' font ',12' margins 0.05,0.97,0.27,0.93 "
                  "spacing 0.06,0.19" % (res["repetitions"], res["date"]),
                  "set boxwidth 0.7", "set grid ytics",
                  "set xtics rotate by -40 nomirror", "set ylabel 'ns/op (log scale)'", "unset key",
                  "set logscale y", "set yrange [0.5:*]"]
        # The legend and the abbreviations, in the band under the panels (screen coordinates: drawn with every
        # panel, always at the same place).
        for k, (key, (color, fill, text)) in enumerate(CHART_STYLE.items()):
            y = 0.15 - 0.02 * k
            script.append("set object %d rect from screen 0.05,%g to screen 0.065,%g fc rgb '%s' fs %s front" % (
                k + 1, y - 0.007, y + 0.007, color, fill))
            script.append("set label %d '%s' at screen 0.07,%g left front" % (k + 1, q(text), y))
        for k, line in enumerate(ABBREVIATIONS):
            script.append("set label %d '%s' at screen 0.05,%g left front font ',9'" % (10 + k, q(line),
                                                                                         0.075 - 0.016 * k))
        for w in WORKLOADS:
            rows = workload_rows(runs, w)
            if not rows:
                continue
            files = {}
            for i, (s, r) in enumerate(rows):
                k = kind(s, r)
                cat = "alloy" if k == "alloy" else ("ref" if k in ("floor", "bound", "loop") else "anchor")
                files.setdefault(cat, []).append('%d "%s" %g' % (i, short(s), r["ns_per_op"]))
            title, params = PANEL[w]
            script.append("set title \"%s\\n{/*0.85 %s}\" enhanced" % (title, params.replace("^", "\\^")))
            script.append("set xrange [-0.6:%g]" % (len(rows) - 0.4))
            parts = []
            for cat, lines in files.items():
                dat = os.path.join(tmp, "%s_%s.dat" % (w, cat))
                with open(dat, "w") as f:
                    f.write("\n".join(lines) + "\n")
                color, fill, _ = CHART_STYLE[cat]
                parts.append("'%s' using 1:3:xtic(2) with boxes fc rgb '%s' fs %s notitle" % (dat, color, fill))
                parts.append("'%s' using 1:3:(sprintf('%%.3g', $3)) with labels offset 0,0.7 notitle" % dat)
            script.append("plot " + ", ".join(parts))
        script.append("unset multiplot")
        sp = os.path.join(tmp, "chart.gp")
        with open(sp, "w") as f:
            f.write("\n".join(script) + "\n")
        r = subprocess.run(["gnuplot", sp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            return "gnuplot failed: " + r.stdout[-500:]
    return None


def has_pngcairo():
    r = subprocess.run(["gnuplot", "-e", "set terminal"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return "pngcairo" in r.stdout


def print_summary(res):
    runs = res["runs"]
    for w in WORKLOADS:
        rows = workload_rows(runs, w)
        if not rows:
            continue
        log("%s" % TITLES[w])
        for s, r in rows:
            extra = ""
            if "peak_held_bytes" in r:
                extra = "  peak held %s, live %s" % (fmt_bytes(r["peak_held_bytes"]), fmt_bytes(r["peak_live_bytes"]))
            log("  %-62s %-7s %9s ns/op%s" % (s, r["label"], fmt_ns(r["ns_per_op"]), extra))
    for n in sorted(k for k in runs if k.startswith("W3@")):
        log("  %-70s %9s ns/op" % (n, fmt_ns(runs[n]["ns_per_op"])))
    if res["callgrind"]:
        log("instructions per op (callgrind)")
        for n, v in res["callgrind"].items():
            log("  %-70s %9.1f" % (n, v["instructions_per_op"]))
    log("alloy's speed goals, checked on this run")
    for t, m, v in targets(runs, res["callgrind"], res.get("replay_markdown")):
        log("  %-11s %s: %s" % (v.replace("*", ""), t, m))


def binaries(build_dir):
    """The benchmark binaries built in build_dir that export their stacks: alloy_bench first (the run's order)."""
    bdir = os.path.join(build_dir, "benchmarks")
    exes = [os.path.join(bdir, "alloy_bench")] + [os.path.join(bdir, "alloy_bench_" + lib) for lib in
                                                 ("mimalloc", "jemalloc", "tcmalloc")]
    exes.append(os.path.join(bdir, "phobos", "alloy_bench_phobos"))
    return [e for e in exes if os.path.exists(e)]


def check_stacks(stacks, replay_names=None):
    """What can go wrong between the descriptors and the report, as a list of problems (empty: none): a stack without
    a label, two stacks with one label (or one stack with two), a goal whose check the report does not know, a goal
    on a stack or naming a stack that does not run in its workload, and a label this script names (summary, tables,
    method text) that no stack has. replay_names: alloy-replay --list (replay goals are checked against it)."""
    problems = []
    bins = stacks["binaries"]
    by_name, by_label = {}, {}
    for r in stacks["rows"] + stacks["not_built"]:
        if not r.get("label"):
            problems.append("%s: no label" % r["name"])
            continue
        by_name.setdefault(r["name"], set()).add(r["label"])
        by_label.setdefault(r["label"], set()).add(r["name"])
    for m in stacks["malloc_names"]:
        by_label.setdefault(m, set()).add(m)
    problems += ["stack '%s' has several labels: %s" % (n, ", ".join(sorted(ls))) for n, ls in by_name.items()
                 if len(ls) > 1]
    problems += ["label '%s' is shared by %s" % (l, "; ".join(sorted(ns))) for l, ns in by_label.items() if len(ns) > 1]
    runs_in = {}
    for r in stacks["rows"]:
        runs_in.setdefault(r["workload"], set()).add(r["name"])
    not_built = {x["name"] for x in stacks["not_built"]}

    def resolves(name, w):
        if w == "replay":
            return replay_names is None or name in replay_names
        if name in runs_in.get(w, ()) or name in not_built:
            return True
        # a malloc row of another binary: the malloc descriptor runs in w under this binary's malloc name
        return name in stacks["malloc_names"] and any(r["malloc"] and r["workload"] == w for r in stacks["rows"])

    for t in stacks["targets"]:
        where = "goal '%s' of %s" % (t["goal"], t["stack"])
        if t["check"] not in CHECKS:
            problems.append("%s: unknown check '%s'" % (where, t["check"]))
        w = t["workload"]
        if t["check"] == "arena_sweep":
            if not any(r["name"] == t["stack"] and r["workload"].startswith(w + "@") for r in stacks["rows"]):
                problems.append("%s: the stack has no %s@<arena> rows" % (where, w))
        elif not resolves(t["stack"], w):
            problems.append("%s: the stack does not run in %s" % (where, w))
        for o in t["of"]:
            if not resolves(o, w):
                problems.append("%s: names '%s', which does not run in %s" % (where, o, w))
        if len(t["factor"]) != max(1, len(t["of"])):
            problems.append("%s: %d factors for %d references" % (where, len(t["factor"]), len(t["of"])))
    use_stacks(stacks)

    def label_runs(label, w, binary="alloy_bench", what=""):
        if binary not in bins:
            return  # that binary is not built here: its labels cannot be checked
        n = named(label)
        if n is None:
            problems.append("%s names label '%s', which no stack has" % (what, label))
        elif w is not None and not resolves(n, w):
            problems.append("%s names '%s' in %s, where it does not run" % (what, label, w))

    for need, label, w in SUMMARY:
        label_runs(label, w, what="SUMMARY")
    for col, per_w, binary in SUMMARY_ANCHORS:
        for w, label in per_w.items():
            label_runs(label, w, binary, "SUMMARY_ANCHORS (%s)" % col)
    for label in PRETTY:
        label_runs(label, None, what="PRETTY")
    for w, labels in CG_COLUMNS.items():
        for label in labels:
            label_runs(label, w, what="CG_COLUMNS")
    for label in re.findall(r"\{name:([^}]+)\}", METHOD):
        label_runs(label, None, what="METHOD")
    for w, labels in METHOD_FIGURE_LABELS.items():
        for label in labels:
            label_runs(label, w, what="METHOD_FIGURE_LABELS")
    return problems


def check_stacks_main(args):
    """--check-stacks: the descriptors of the binaries built in --build-dir (or of --stacks-json), checked."""
    if args.stacks_json:
        with open(args.stacks_json) as f:
            d = json.load(f)
        stacks = d.get("stacks", d)
        if "binaries" not in stacks:  # one binary's --list-stacks output
            stacks = merge_stacks([stacks])
    else:
        exes = binaries(args.build_dir)
        if not exes or not exes[0].endswith("/alloy_bench"):
            raise SystemExit("bench_report --check-stacks: %s/benchmarks/alloy_bench is not built" % args.build_dir)
        stacks = list_stacks(exes)
    replay_exe = os.path.join(args.build_dir, "benchmarks", "replay", "alloy-replay")
    replay_names = None
    if os.path.exists(replay_exe):
        replay_names = set(subprocess.run([replay_exe, "--list"], stdout=subprocess.PIPE, text=True,
                                          check=True).stdout.splitlines())
    problems = check_stacks(stacks, replay_names)
    log("bench_report --check-stacks: %d rows, %d goals from %s%s" % (
        len(stacks["rows"]), len(stacks["targets"]), ", ".join(stacks["binaries"]),
        "" if replay_names is None else ", alloy-replay --list"))
    for p in problems:
        log("  problem: " + p)
    if problems:
        raise SystemExit("bench_report --check-stacks: %d problem(s)" % len(problems))
    log("bench_report --check-stacks: labels unique, every goal's stacks found")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="repetitions per benchmark (>= 5 for the record; default 5)")
    ap.add_argument("--no-build", action="store_true", help="use the binaries already built")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the instruction counts")
    ap.add_argument("--filter", default="", help="regex on benchmark names (development runs; the record runs all)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 2))
    ap.add_argument("--publish", action="store_true",
                    help="write the committed copies (docs/performance.md, docs/performance.png, "
                         "benchmarks/results/<date>.json) instead of build/report/")
    ap.add_argument("--out-md", help="the page (default build/report/performance.md; --publish: docs/performance.md)")
    ap.add_argument("--out-png", help="the chart (default beside the page, performance.png)")
    ap.add_argument("--results-dir", help="where <date>.json goes (default build/report/results; --publish: "
                                          "benchmarks/results)")
    ap.add_argument("--from-json", metavar="FILE", help="regenerate the page and chart from a results file, run nothing "
                    "(a results file without the stack descriptors takes them from the binaries in --build-dir)")
    ap.add_argument("--check-stacks", action="store_true",
                    help="check the stack descriptors of the binaries in --build-dir (unique labels, every goal's "
                         "stacks exist, every label this script names exists) and exit; the ctest bench_stack_names")
    ap.add_argument("--stacks-json", metavar="FILE", help="--check-stacks: check this list (a --list-stacks output or "
                                                          "a results file) instead")
    args = ap.parse_args()
    if args.check_stacks:
        check_stacks_main(args)
        return
    report_dir = os.path.join(ROOT, "docs") if args.publish else os.path.join(ROOT, "build", "report")
    args.out_md = args.out_md or os.path.join(report_dir, "performance.md")
    args.out_png = args.out_png or os.path.join(os.path.dirname(args.out_md), "performance.png")
    args.results_dir = args.results_dir or (os.path.join(ROOT, "benchmarks", "results") if args.publish else
                                            os.path.join(ROOT, "build", "report", "results"))
    os.makedirs(os.path.dirname(os.path.abspath(args.out_md)), exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out_png)), exist_ok=True)
    md_dir = os.path.dirname(os.path.abspath(args.out_md))
    if args.from_json:
        with open(args.from_json) as f:
            res = json.load(f)
        res["regenerated_with"] = "tools/bench_report.sh" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
        if "stacks" not in res:  # results from before the descriptors were exported: the current build's
            exes = binaries(args.build_dir)
            if not exes:
                raise SystemExit("bench_report: %s has no stack descriptors (older results) and no alloy_bench is "
                                 "built in %s to list them; build it (cmake --build --preset bench --target "
                                 "alloy_bench) or pass --build-dir" % (args.from_json, args.build_dir))
            res["stacks"] = list_stacks(exes)
            res["notes"].append("labels and goals from the stack descriptors of the current build (%s --list-stacks): "
                                "these results predate their export" % ", ".join(res["stacks"]["binaries"]))
        use_stacks(res["stacks"])
        note = write_chart(res, args.out_png)
        if note:
            res["notes"].append(note)
        write_markdown(res, args.out_md, os.path.relpath(args.out_png, md_dir),
                       os.path.relpath(os.path.abspath(args.from_json), md_dir))
        print_summary(res)
        log("=== bench_report: wrote %s and %s from %s ===" % (os.path.relpath(args.out_md, ROOT),
            os.path.relpath(args.out_png, ROOT), args.from_json))
        return
    command = "tools/bench_report.sh" + "".join(" " + shlex.quote(a) for a in sys.argv[1:])
    t_start = time.time()

    targets_built = build(args.build_dir, args.jobs) if not args.no_build else None
    bdir = os.path.join(args.build_dir, "benchmarks")
    exe = os.path.join(bdir, "alloy_bench")
    d_exe = os.path.join(bdir, "phobos", "alloy_bench_phobos")
    if not os.path.exists(exe):
        raise SystemExit("bench_report: %s not built" % exe)
    # Before minutes of measurement: every label this script names, and every goal's stack, exists in the binaries
    # (a renamed stack fails here instead of turning its goal into "n/a").
    check_stacks_main(argparse.Namespace(stacks_json=None, build_dir=args.build_dir))

    loads = [load_sample()]
    cpu0 = cpu_sample()
    notes = []
    git = git_state()
    if git["dirty_headers"]:
        notes.append("uncommitted (work-in-progress) headers were built into this run: " +
                     ", ".join(git["dirty_headers"]))
    extra = ["--benchmark_filter=" + args.filter] if args.filter else []
    log("=== bench_report: alloy_bench, %d repetitions ===" % args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        data = run_gbench(exe, args.reps, os.path.join(tmp, "alloy.json"), extra, "alloy_bench")
        context = data.get("context", {})
        runs = gbench_rows(data, "alloy_bench")
        if context and context.get("alloy.foonathan_memory") != "yes":
            notes.append("foonathan::memory not found at build time: no memory_pool / memory_stack anchors")
        for blk in ("bitmapped_block", "region", "allocator_list"):
            if context and context.get("alloy." + blk) != "yes":
                notes.append("<alloy/%s.hpp> absent when built: its stacks did not run" % blk)
        loads.append(load_sample())
        malloc_exes = []  # the binaries whose malloc is another library's: their callgrind passes run too (W3)
        for lib in ("mimalloc", "jemalloc", "tcmalloc"):
            lib_exe = os.path.join(bdir, "alloy_bench_" + lib)
            if os.path.exists(lib_exe) and (targets_built is None or "alloy_bench_" + lib in targets_built):
                log("=== bench_report: alloy_bench_%s (malloc rows linked against %s) ===" % (lib, lib))
                data_lib = run_gbench(lib_exe, args.reps, os.path.join(tmp, lib + ".json"), extra, lib)
                runs.update(gbench_rows(data_lib, lib))
                malloc_exes.append(lib_exe)
            else:
                notes.append("no %s anchor (%s not found, or alloy_bench_%s not built)" % (lib, lib, lib))
        if os.path.exists(d_exe) and (targets_built is None or "alloy_bench_phobos" in targets_built):
            log("=== bench_report: alloy_bench_phobos (D, std.experimental.allocator) ===")
            drows, dctx = run_phobos(d_exe, args.reps, os.path.join(tmp, "phobos.json"))
            if args.filter:
                drows = {k: v for k, v in drows.items() if re.search(args.filter, k)}
            runs.update(drows)
            context["phobos.compiler"] = dctx.get("compiler", "?")
        else:
            notes.append("no Phobos rows (ldc2 not found, or alloy_bench_phobos not built)")
    replay_md = None
    replay_exe = os.path.join(bdir, "replay", "alloy-replay")
    traces = sorted(glob.glob(os.path.join(ROOT, "benchmarks", "replay", "traces", "*.csv")))
    if os.path.exists(replay_exe) and traces and not args.filter and \
            (targets_built is None or "alloy-replay" in targets_built):
        log("=== bench_report: alloy-replay on the shipped traces (docs/replay.md) ===")
        progress("[replay] %s" % ", ".join(os.path.basename(t) for t in traces))
        r = subprocess.run([replay_exe, "--repetitions", str(args.reps)] + traces, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        progress_done()
        if r.returncode == 0:
            replay_md = r.stdout.strip()
        else:
            notes.append("alloy-replay failed (exit %d): no trace replay section" % r.returncode)
    # Keep the row order by workload (anchors then alloy inside workload_rows).
    order = {w: i for i, w in enumerate(WORKLOADS)}
    runs = dict(sorted(runs.items(), key=lambda kv: order.get(kv[0].split("/")[0].split("@")[0], 99)))
    cg = {}
    if not args.no_callgrind:
        log("=== bench_report: callgrind, instructions per op (W1 to W4) ===")
        cg_exes = [(exe, False)]
        if any(r["source"] == "phobos" for r in runs.values()):
            cg_exes.append((d_exe, True))
        cg = run_callgrind(cg_exes, args.filter)
        # mimalloc, jemalloc, tcmalloc: W3 only (the net-of-the-loop goal is checked on instructions too)
        cg.update(run_callgrind([(e, False) for e in malloc_exes], args.filter or "^W3/"))
    loads.append(load_sample())
    others = other_cpus(cpu0, cpu_sample())

    # The descriptors of every binary that ran (labels, kinds, goals), stored with the results.
    stacks = list_stacks([exe] + malloc_exes + ([d_exe] if any(r["source"] == "phobos" for r in runs.values()) else []))
    use_stacks(stacks)
    date = datetime.datetime.utcnow().strftime("%Y-%m-%d")
    os.makedirs(args.results_dir, exist_ok=True)
    json_path = os.path.join(args.results_dir, date + ".json")
    res = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "command": command,
           "build": "preset bench: Release, -O2 -DNDEBUG, g++, -Wa,-mbranches-within-32B-boundaries; D: ldc2 -O2 -release", "repetitions": args.reps,
           "machine": machine_info(), "load": loads, "other_cpus": None if others is None else round(others, 3),
           "context": context, "notes": notes, "stacks": stacks, "runs": runs,
           "callgrind": cg, "replay_markdown": replay_md, "git": git, "json_path": os.path.relpath(json_path, ROOT), "elapsed_s": round(time.time() - t_start, 1)}
    with open(json_path, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    chart_note = write_chart(res, args.out_png)
    if chart_note:
        notes.append(chart_note)
    write_markdown(res, args.out_md, os.path.relpath(args.out_png, md_dir), os.path.relpath(json_path, md_dir))
    print_summary(res)
    log("=== bench_report: wrote %s, %s, %s (%.0f s) ===" % (os.path.relpath(json_path, ROOT),
        os.path.relpath(args.out_md, ROOT), os.path.relpath(args.out_png, ROOT), time.time() - t_start))
    if not args.publish:
        log("The report is in %s/, which git ignores. To make this run the committed page: cp %s "
            "benchmarks/results/ && tools/bench_report.sh --publish --from-json benchmarks/results/%s" % (
                os.path.relpath(md_dir, ROOT), os.path.relpath(json_path, ROOT), os.path.basename(json_path)))


if __name__ == "__main__":
    main()
