#!/usr/bin/env python3
"""Judges rnx on the project's own kernel corpus (bench/corpus/): paired A/A, calibrated slowdowns, verify.

    python3 bench/corpus.py aa [--reps 1] [--device cpu|cuda] [--suite corpus|cost] [--kernel NAME]... [--rnx PATH]
                               [--bench KEY=VALUE]...
    python3 bench/corpus.py slowdown --fraction 0.05 [--reps 1] [--calibrate 0] [--device cpu|cuda] [--kernel NAME]...
    python3 bench/corpus.py verify [--device cpu|cuda] [--kernel NAME]... [--jobs 1]
    python3 bench/corpus.py sizes [--device cpu|cuda] [--threads 1] [--kernel NAME]...

aa        the corpus in a throw-away git repository with two commits, the second changing only a README; one
          `rnx bench --pair HEAD~1` per repetition with the manifest's defaults (no [bench] table, no flags but
          --kernel filters and --rope), each verdict from `rnx compare BASE HEAD --format json`. Counts broken /
          faster / slower / equivalent / abstain and the MDE distribution. --bench KEY=VALUE (repeatable) adds a
          [bench] table to the manifests: settings tried on the whole corpus before they become defaults (the
          defaults written out, --bench budget_ms=1500, is the same-build baseline to compare against).
slowdown  the same, the second commit wrapping every selected kernel in bench/corpus/slowdown.py's calibrated
          slowdown (FRACTION more time per call, results unchanged): the detection rate (decided *slower*) and
          how close the measured ratios come to 1 + FRACTION. With --calibrate N (meant for CUDA, where the
          wrapper's own launch and Python add time it cannot see) N runs come first, each rescaling every
          variant by the ratio it measured; only the --reps after them count.
verify    `rnx verify --config bench/corpus/rnx.toml --kernel K --candidate FILE` for every file of
          bench/corpus/honest/ (must be accepted) and bench/corpus/cheats/ (must be rejected, with the check its
          header names failing). Candidates marked gpu=yes, and kernels declared device = "cuda", need --device cuda;
          those marked cpu=only (a CPU extension) are judged on the CPU whatever --device says.
sizes     each kernel's time per call at every batch of its manifest, timed in this process by a plain loop
          (glibc's malloc thresholds fixed as the runner's worker fixes them, three warm-up calls, then calls for
          0.3 s; CUDA synchronized): how the corpus is sized, not a verdict.

--device cpu uses bench/corpus/rnx.toml, --device cuda bench/corpus/rnx.gpu.toml (--suite cost: rnx.gpu_cost.toml,
the 36 configurations of a GPU pull request's suite, 10 us kernels to millisecond GEMMs; each row then has its
cost, `busy_s` from rnx bench --timings and `wall_s` with an equal share of the run's other time) (verify always uses rnx.toml's
shapes, on the device asked for). The band is --rope (default 0.02 on CPU, 0.01 on CUDA), given to both `rnx
bench` (its sequential looks) and `rnx compare`. rnx is build/bin/rnx of this repository unless --rnx says
otherwise; rnx-runner-worker and rnx-verify-worker must sit beside it. Prints a table and writes
bench/results/corpus_MODE_DEVICE_UTCSTAMP.json (or --out).
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "bench", "corpus")
sys.path.insert(0, CORPUS)
import slowdown  # noqa: E402  (bench/corpus/slowdown.py)

MANIFESTS = {"cpu": "rnx.toml", "cuda": "rnx.gpu.toml"}
# --suite cost: the suite of a GPU pull request (issue 34), sizes from 10 us up; on the CPU the corpus itself.
# --suite kb: KernelBench-style level-1 and level-2 problems written for it and never tuned (kb_problems/), GPU only.
SUITES = {"corpus": MANIFESTS, "cost": {"cpu": "rnx.toml", "cuda": "rnx.gpu_cost.toml"},
          "kb": {"cuda": "rnx.gpu_kb.toml"}}
MANIFEST = dict(MANIFESTS)  # device -> the manifest of the suite asked for (set by main from --suite)
DECISIONS = ("broken", "faster", "slower", "equivalent", "abstain", "new", "missing")
TIME_LINE = re.compile(r"time: ([\d.]+) s in all")


def fail(message):
    sys.exit(f"corpus.py: {message}")


class OutOfTime(Exception):
    """A run that passed its time limit; what finished before it is still written."""


def stop_group(proc):
    """SIGTERM to the process group rnx leads (so it can end its workers), SIGKILL after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def git(repo, *args):
    subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def manifest_kernels(manifest_path):
    """name -> [[kernel]] table with [defaults]' batch, dtypes and device filled in."""
    with open(manifest_path, "rb") as f:
        manifest = tomllib.load(f)
    defaults = manifest.get("defaults", {})
    return {k["name"]: {**{key: defaults[key] for key in ("batch", "dtypes", "device") if key in defaults}, **k}
            for k in manifest["kernel"]}


def selected(kernels, wanted):
    unknown = [k for k in wanted if k not in kernels]
    if unknown:
        fail(f"--kernel {', '.join(unknown)}: not in the corpus manifest (known: {', '.join(sorted(kernels))})")
    return [k for k in kernels if not wanted or k in wanted]


def make_repo(work, device, scenario, names, fraction, bench_table=()):
    """The corpus in a fresh git repository: commit 1 as it is, commit 2 a README (aa) or the slowed kernels.
    bench_table: KEY=VALUE lines of a [bench] table added to every manifest (--bench: settings tried before they
    become defaults; the corpus itself has none)."""
    repo = os.path.join(work, "corpus")
    for folder in ("kernels", "pkg_kernels", "kb_problems"):
        shutil.copytree(os.path.join(CORPUS, folder), os.path.join(repo, folder))
    for manifest in {m for suite in SUITES.values() for m in suite.values()}:
        shutil.copy(os.path.join(CORPUS, manifest), os.path.join(repo, manifest))
        if bench_table:
            with open(os.path.join(repo, manifest), "a") as f:
                f.write("\n[bench]\n" + "".join(f"{line}\n" for line in bench_table))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "corpus bench")
    git(repo, "config", "user.email", "corpus@example.invalid")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the corpus")
    if scenario == "aa":
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("A documentation-only change: every kernel is unchanged.\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", scenario)
    else:
        write_slowed(repo, device, names, fraction, {}, amend=False)
    return repo


def write_slowed(repo, device, names, fraction, scales, amend):
    """Commit 2 (or, amend=True, commit 2 again): each named kernel as commit 1 has it, wrapped in the slowdown with
    its calibrated scale (scales: kernel -> dtype -> factor)."""
    kernels = manifest_kernels(os.path.join(repo, MANIFEST[device]))
    for name in names:
        rel = kernels[name]["path"]
        original = subprocess.run(["git", "-C", repo, "show", f"{'HEAD~1' if amend else 'HEAD'}:{rel}"], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout
        with open(os.path.join(repo, rel), "w", encoding="utf-8") as f:
            f.write(slowdown.slowed_source(original, fraction, rel, scales.get(name)))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", *(["--amend"] if amend else []), "-m", "slowdown")


def calibrated_scales(rows, fraction, scales):
    """Each (kernel, dtype)'s scale after a calibration run: the current scale times FRACTION over the extra time
    rnx bench measured (the mean over the dtype's batches), by at most a factor of 3 per run. Left as it was where
    the run measured no slowdown or measured too coarsely to tell (its 95% interval wider than FRACTION), so a noisy
    calibration run cannot rescale a variant by its noise."""
    extra = {}
    for r in rows:
        if r["ratio"] is None or r["decision"] not in DECISIONS or not r["ci95"]:
            continue
        if r["ci95"][1] - r["ci95"][0] <= fraction:
            extra.setdefault((r["kernel"], r["dtype"]), []).append(r["ratio"] - 1)
    out = {k: dict(v) for k, v in scales.items()}
    for (kernel, dtype), values in extra.items():
        measured = statistics.mean(values)
        current = scales.get(kernel, {}).get(dtype, 1.0)
        if measured > fraction / 20:
            out.setdefault(kernel, {})[dtype] = current * min(max(fraction / measured, 1 / 3), 3.0)
    return out


def bench_pair(rnx, repo, device, names, all_names, rope, out_dir, rep, timeout_s):
    """One `rnx bench --pair HEAD~1` with default settings (and --timings, where the time went); returns
    (head.json, base.json, wall s, log tail, the timings document or None)."""
    head = os.path.join(out_dir, f"head-{rep}.json")
    base = os.path.join(out_dir, f"base-{rep}.json")
    timings = os.path.join(out_dir, f"timings-{rep}.json")
    cmd = [rnx, "bench", "--config", os.path.join(repo, MANIFEST[device]), "--out", head, "--pair", "HEAD~1",
           "--base-out", base, "--rope", str(rope), "--timings", timings]
    if len(names) != len(all_names):
        for name in names:
            cmd += ["--kernel", name]
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        log, _ = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        log, _ = proc.communicate()
        raise OutOfTime(f"rnx bench did not finish within {timeout_s:.0f} s (--timeout-s): {log[-1500:]}")
    p = subprocess.CompletedProcess(cmd, proc.returncode, log)
    wall = time.monotonic() - started
    log = p.stdout
    with open(os.path.join(out_dir, f"bench-{rep}.log"), "w") as f:
        f.write(" ".join(cmd) + "\n" + log)
    if p.returncode != 0 or not os.path.exists(head) or not os.path.exists(base):
        fail(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{log[-3000:]}")
    cost = None
    if os.path.exists(timings):
        with open(timings) as f:
            cost = json.load(f)
    return head, base, wall, log, cost


def compare(rnx, base, head, rope):
    p = subprocess.run([rnx, "compare", base, head, "--format", "json", "--rope", str(rope)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return json.loads(p.stdout)
    except json.JSONDecodeError:
        fail(f"rnx compare {base} {head} gave no JSON (exit {p.returncode}): {p.stderr[-2000:]}")


def without_arms(path):
    """A copy of the run document with no result's load orders (first_sides): what the verdict makes of the same
    samples when the processes are one arm (docs/statistics.md, the two load orders). None where none were
    recorded."""
    with open(path) as f:
        doc = json.load(f)
    removed = [r.pop("first_sides", None) for r in doc["results"]]
    if not any(removed):
        return None
    copy = path[:-len(".json")] + "-one-arm.json"
    with open(copy, "w") as f:
        json.dump(doc, f)
    return copy


def add_one_arm(rows, rnx, base, head, rope):
    """Each row's decision on the same samples with the processes as one arm (`decision_one_arm`)."""
    base_copy, head_copy = without_arms(base), without_arms(head)
    if base_copy is None or head_copy is None:
        return
    verdict = compare(rnx, base_copy, head_copy, rope)
    by_key = {(c["kernel"], c["runtime"], c["dtype"], c["batch"]): c for c in verdict["configs"]}
    for r in rows:
        c = by_key.get((r["kernel"], r["runtime"], r["dtype"], r["batch"]))
        if c is not None and r["decision"] in DECISIONS:
            r["decision_one_arm"] = c["decision"]
            r["ci95_one_arm"] = c["ci95"]


def run_statuses(path):
    """(kernel, runtime, dtype, batch) -> (status, message) from a run document."""
    with open(path) as f:
        doc = json.load(f)
    return {(r["kernel"], r["runtime"], r["dtype"], r["batch"]): (r["status"], r.get("message", ""))
            for r in doc["results"]}


def paired_rows(args, scenario, names, all_names):
    """Every repetition runs the selection in chunks of --chunk kernels (one paired rnx bench each), so a run that
    reaches the time limit loses only its chunk; --timeout-s bounds the whole mode. A slowdown with --calibrate N
    first runs N calibration repetitions, each setting the variants' scales from what it measured; their rows are
    returned apart (calibration) and are not detections."""
    rows, runs, calibration = [], [], []
    size = args.chunk or len(names)
    chunks = [names[i:i + size] for i in range(0, len(names), size)]
    deadline = time.monotonic() + args.timeout_s
    with tempfile.TemporaryDirectory(prefix="rnx-corpus-") as work:
        repo = make_repo(work, args.device, scenario, names, args.fraction, args.bench)
        scales = {}
        for step in range(args.calibrate if scenario == "slowdown" else 0):
            got, got_runs = one_repetition(args, repo, work, chunks, all_names, f"calibration {step + 1}", deadline)
            scales = calibrated_scales(got, args.fraction, scales)
            calibration.append({"step": step, "rows": got, "runs": got_runs, "scales_after": scales})
            write_slowed(repo, args.device, names, args.fraction, scales, amend=True)
            print(f"[calibration {step + 1}] scales: {json.dumps(scales, sort_keys=True)}", flush=True)
        for rep in range(args.reps):
            got, got_runs = one_repetition(args, repo, work, chunks, all_names, rep, deadline)
            rows += got
            runs += got_runs
    return rows, runs, calibration


def one_repetition(args, repo, work, chunks, all_names, rep, deadline):
    """One paired rnx bench per chunk; the rows of every configuration and the runs' records."""
    rows, runs = [], []
    for part, chunk in enumerate(chunks):
        label = (f"{args.mode} rep {rep + 1}/{args.reps}" if isinstance(rep, int) else str(rep)) + \
            (f" chunk {part + 1}/{len(chunks)}" if len(chunks) > 1 else "")
        left = deadline - time.monotonic()
        if left < 30:
            runs.append({"rep": rep, "chunk": chunk, "error": "not run: out of time (--timeout-s)"})
            print(f"[{label}] not run: out of time", flush=True)
            continue
        run_id = f"{rep}-{part}".replace(" ", "_")
        try:
            head, base, wall, log, cost = bench_pair(args.rnx, repo, args.device, chunk, all_names, args.rope,
                                                     work, run_id, left)
        except OutOfTime as e:
            runs.append({"rep": rep, "chunk": chunk, "error": str(e)})
            print(f"[{label}] {e}", flush=True)
            continue
        verdict = compare(args.rnx, base, head, args.rope)
        got = verdict_rows(verdict, rep, run_statuses(head), run_statuses(base))
        add_one_arm(got, args.rnx, base, head, args.rope)
        add_costs(got, cost, wall)
        rows += got
        m = TIME_LINE.search(log)
        runs.append({"rep": rep, "chunk": chunk, "wall_s": round(wall, 1),
                     "rnx_time_s": float(m.group(1)) if m else None, "verdict": verdict["verdict"],
                     "reason": verdict["reason"], "timings": cost, "log_tail": log[-6000:]})
        print(f"[{label}] {verdict['verdict']} in {wall:.0f} s", flush=True)
    return rows, runs


STEP_KEYS = ("control_s", "load_s", "inputs_s", "bind_s", "check_s", "warmup_s", "sampling_s", "audit_s")


def add_costs(rows, cost, wall):
    """Each row's cost: `busy_s`, the time its processes spent on it (control, load, inputs, bind, check, warm-up, sampling, audit, from
    rnx bench --timings), and `wall_s`, that plus an equal share of what the run spent on nothing in particular
    (worker starts not hidden, the orchestrator, looks): the run's wall time split over its configurations."""
    timed = {c["config"]: c for c in (cost or {}).get("configs", [])}
    judged = [r for r in rows if r["decision"] in DECISIONS]
    found = {id(r): timed.get(config_label(r)) for r in judged}
    overhead = max(0.0, wall - sum(c["busy_s"] for c in found.values() if c is not None))
    for r in judged:
        c = found[id(r)]
        r["busy_s"] = None if c is None else round(c["busy_s"], 3)
        r["wall_s"] = None if c is None else round(c["busy_s"] + overhead / len(judged), 3)
        if c is not None:  # the steps of busy_s, where rnx bench reports them
            r["steps_s"] = {k[:-2]: round(c[k], 3) for k in STEP_KEYS if k in c}


def config_label(r):
    """The configuration's label as rnx bench's timings name it (kernel/runtime/dtype/bN)."""
    return f'{r["kernel"]}/{r["runtime"]}/{r["dtype"]}/b{r["batch"]}'


def verdict_rows(verdict, rep, statuses, base_statuses):
    """A row per configuration the verdict judged, and per configuration it left out (skipped on this machine:
    Triton without CUDA, ...) with the run's own status."""
    rows, judged = [], set()
    for c in verdict["configs"]:
        key = (c["kernel"], c["runtime"], c["dtype"], c["batch"])
        judged.add(key)
        rows.append({"rep": rep, "kernel": c["kernel"], "runtime": c["runtime"], "dtype": c["dtype"],
                     "batch": c["batch"], "decision": c["decision"], "ratio": c["ratio"],
                     "ci95": c["ci95"], "mde": c.get("mde"), "base_ms": c.get("base_ms"),
                     "head_ms": c.get("head_ms"), "n_base": c["n_base"], "n_head": c["n_head"],
                     "reason": c["reason"], "head_status": statuses.get(key, ("-", ""))[0],
                     "head_message": statuses.get(key, ("", ""))[1]})
    for key, (status, message) in sorted(statuses.items()):
        if key not in judged:
            rows.append({"rep": rep, "kernel": key[0], "runtime": key[1], "dtype": key[2],
                         "batch": key[3], "decision": status, "ratio": None, "ci95": None, "mde": None,
                         "reason": message, "head_status": status, "head_message": message,
                         "base_status": base_statuses.get(key, ("-", ""))[0]})
    return rows


def pct(x):
    return "-" if x is None else f"{100 * x:.2f}%"


def quantiles(values):
    if not values:
        return None
    v = sorted(values)
    at = lambda q: v[min(len(v) - 1, int(round(q * (len(v) - 1))))]  # noqa: E731
    return {"n": len(v), "min": v[0], "p10": at(0.1), "median": statistics.median(v), "p90": at(0.9), "max": v[-1]}


def print_rows(rows):
    print(f"{'configuration':42} {'decision':10} {'ratio':>7} {'95% interval':>17} {'MDE':>7} {'base ms':>9}  note")
    for r in rows:
        config = f'{r["kernel"]}/{r["runtime"]}/{r["dtype"]}/b{r["batch"]}'
        ratio = f'{r["ratio"]:.4f}' if r["ratio"] is not None else "-"
        ci = f'[{r["ci95"][0]:.4f}, {r["ci95"][1]:.4f}]' if r["ci95"] else "-"
        base_ms = f'{r["base_ms"]:.4f}' if r.get("base_ms") is not None else "-"
        note = "" if r["decision"] in ("equivalent",) else (r.get("reason") or r.get("head_message") or "")
        print(f'{config:42} {r["decision"]:10} {ratio:>7} {ci:>17} {pct(r["mde"]):>7} {base_ms:>9}  '
              f'{note[:110]}')


def summarize_paired(rows, scenario, fraction, rope):
    """Counts, MDE, cost. `resolution` is the MDE with the band taken out, (1 + MDE) / (1 + rope) - 1: rnx's MDE is
    the smallest slowdown that would be called *slower*, so it is never below the band itself; the resolution is
    how far past the band's edge a change must lie to be seen, the part the measurement decides."""
    judged = [r for r in rows if r["decision"] in DECISIONS]
    counts = {d: sum(1 for r in judged if r["decision"] == d) for d in DECISIONS}
    other = {}
    for r in rows:
        if r["decision"] not in DECISIONS:
            other[r["decision"]] = other.get(r["decision"], 0) + 1
    mdes = [r["mde"] for r in judged if r["mde"] is not None]
    walls = [r["wall_s"] for r in judged if r.get("wall_s") is not None]
    summary = {"configurations": len(judged), "counts": counts, "not_judged": other, "mde": quantiles(mdes),
               "resolution": quantiles([(1 + m) / (1 + rope) - 1 for m in mdes]),
               "wall_s_per_config": quantiles(walls),
               "busy_s_per_config": quantiles([r["busy_s"] for r in judged if r.get("busy_s") is not None]),
               "over_8_s": sum(1 for w in walls if w > 8)}
    if judged:
        summary["equivalent_share"] = counts["equivalent"] / len(judged)
    contrasted = [r for r in judged if "decision_one_arm" in r]
    if contrasted:
        summary["one_arm"] = {"configurations": len(contrasted),
                              "counts": {d: sum(1 for r in contrasted if r["decision_one_arm"] == d) for d in DECISIONS},
                              "counts_two_arms": {d: sum(1 for r in contrasted if r["decision"] == d) for d in DECISIONS}}
    if scenario == "slowdown":
        target = 1 + fraction
        ratios = [r["ratio"] for r in judged if r["ratio"] is not None]
        covered = [r for r in judged if r["ci95"] and r["ci95"][0] <= target <= r["ci95"][1]]
        summary.update({"detected": counts["slower"], "detection_rate": counts["slower"] / len(judged) if judged else None,
                        "target_ratio": target, "ratios": quantiles(ratios),
                        "intervals_covering_target": len(covered)})
    return summary


PHASES = ("total_s", "worker_start_waited_s", "start_hidden_s", "control_s", "load_s", "inputs_s", "bind_s", "check_s",
          "warmup_s", "sampling_s", "measure_other_s", "audit_s")


def phase_totals(runs):
    """Where the time of every rnx bench run went, summed over the runs (rnx bench --timings): wall time, worker
    starts waited for and hidden by prestart, and the configurations' steps over their processes."""
    totals = {k: 0.0 for k in PHASES}
    totals["workers"] = 0
    for r in runs:
        t = r.get("timings") or {}
        for k in PHASES:
            totals[k] += t.get(k, 0.0)
        totals["workers"] += t.get("workers", 0)
    return {k: round(v, 2) for k, v in totals.items()}


def print_summary(summary, scenario):
    c = summary["counts"]
    print(f"\n{summary['configurations']} configurations judged: " +
          ", ".join(f"{d} {c[d]}" for d in DECISIONS if c[d] or d in ("broken", "faster", "slower", "equivalent",
                                                                       "abstain")))
    if summary["not_judged"]:
        print("not judged (the run's own status): " + ", ".join(f"{k} {v}" for k, v in summary["not_judged"].items()))
    w = summary.get("wall_s_per_config")
    if w:
        print(f"wall time per configuration (its processes' busy time + an equal share of the rest): median "
              f"{w['median']:.2f} s, p90 {w['p90']:.2f} s, max {w['max']:.2f} s; over 8 s: {summary['over_8_s']}")
    if summary.get("equivalent_share") is not None:
        print(f"equivalent: {100 * summary['equivalent_share']:.0f}%")
    arms = summary.get("one_arm")
    if arms:
        both = ", ".join(f"{d} {arms['counts_two_arms'][d]} / {arms['counts'][d]}" for d in DECISIONS
                         if arms["counts_two_arms"][d] or arms["counts"][d])
        print(f"the same samples, load orders as two arms / as one ({arms['configurations']} configurations with the "
              f"orders recorded): {both}")
    p = summary.get("phases_s")
    if p and p["total_s"]:
        print("where the time went (s, all runs): " + ", ".join(f"{k.removesuffix('_s')} {p[k]:.1f}" for k in PHASES) +
              f", workers {p['workers']}")
    m = summary["mde"]
    if m:
        print(f"MDE: min {pct(m['min'])}, p10 {pct(m['p10'])}, median {pct(m['median'])}, p90 {pct(m['p90'])}, "
              f"max {pct(m['max'])} (n={m['n']})")
        r = summary.get("resolution")
        if r:
            print(f"resolution (the MDE past the band's edge): median {pct(r['median'])}, p90 {pct(r['p90'])}, "
                  f"max {pct(r['max'])}")
    if scenario == "slowdown":
        r = summary["ratios"]
        rate = summary["detection_rate"]
        print(f"detected slower: {summary['detected']} of {summary['configurations']}"
              + (f" ({100 * rate:.0f}%)" if rate is not None else ""))
        if r:
            print(f"measured ratios (target {summary['target_ratio']:.4f}): median {r['median']:.4f}, "
                  f"min {r['min']:.4f}, max {r['max']:.4f}; intervals covering the target: "
                  f"{summary['intervals_covering_target']} of {summary['configurations']}")


# ---------------------------------------------------------------------------------------------------- verify

def case_header(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    prefix = "# rnx-corpus-case:"
    if not first.startswith(prefix):
        fail(f"{path}: the first line must be '{prefix} kernel=NAME expect=accept|review|reject [check=ROW] "
             f"[check_cuda=ROW] [gpu=yes] [cpu=only] [package=NAME]'")
    fields = dict(item.partition("=")[::2] for item in first[len(prefix):].split())
    if fields.get("expect") not in ("accept", "review", "reject") or "kernel" not in fields:
        fail(f"{path}: its header needs kernel=NAME and expect=accept, expect=review or expect=reject")
    if fields["expect"] in ("reject", "review") and "check" not in fields:
        fail(f"{path}: a cheat's or a narrowing's header names the row that must fail or ask for review (check=ROW)")
    if fields.get("gpu") == "yes" and fields.get("cpu") == "only":
        fail(f"{path}: gpu=yes and cpu=only contradict each other")
    if fields.get("package") not in (None, "rnx_corpus_kernels"):
        fail(f"{path}: package={fields['package']} is not one of bench/corpus/packages/")
    return fields


def cases(kernels, names, folders=("honest", "cheats")):
    found = []
    for folder in folders:
        for name in sorted(os.listdir(os.path.join(CORPUS, folder))):
            if not name.endswith(".py"):
                continue
            path = os.path.join(CORPUS, folder, name)
            h = case_header(path)
            if h["kernel"] not in kernels:
                fail(f"{path}: kernel={h['kernel']} is not in bench/corpus/rnx.toml")
            if h["kernel"] in names:
                found.append((folder, path, h))
    return found


def verify_one(args, kernels, folder, path, h):
    # check_cuda: where the check that must fail differs on CUDA (the case's comment says why).
    row = {"case": f"{folder}/{os.path.basename(path)}", "kernel": h["kernel"], "expect": h["expect"],
           "check": h.get(f"check_{args.device}", h.get("check"))}
    if args.deadline is not None and time.monotonic() > args.deadline:
        return {**row, "outcome": "skipped", "ok": None, "detail": "out of time (--timeout-s)"}
    needs_gpu = h.get("gpu") == "yes" or kernels[h["kernel"]].get("device", "").startswith("cuda")
    if needs_gpu and args.device != "cuda":
        return {**row, "outcome": "skipped", "ok": None, "detail": "needs CUDA (run with --device cuda on a GPU)"}
    # cpu=only: a CPU extension (load_inline without CUDA sources) is judged on the CPU whatever --device says.
    device = "cpu" if h.get("cpu") == "only" else args.device
    row["device"] = device
    cmd = [args.rnx, "verify", "--config", os.path.join(CORPUS, "rnx.toml"), "--kernel", h["kernel"],
           "--candidate", path, "--format", "json", "--device", device, "--timeout", str(args.case_timeout_s)]
    started = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    row["wall_s"] = round(time.monotonic() - started, 1)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {**row, "outcome": f"exit {p.returncode}", "ok": False,
                "detail": (p.stderr.strip() or p.stdout.strip())[-600:]}
    rows = {c["name"]: c for c in report["checks"]}
    failed = [c for c in report["checks"] if c["result"] == "fail"]
    # Where the candidate's own time went (import, first call with any compilation, later calls), for the
    # verifier's cost per candidate and its compile share.
    if report.get("candidate_costs"):
        row["costs"] = report["candidate_costs"]
    row["outcome"] = report["verdict"]
    row["failed"] = [c["name"] for c in failed]
    if h["expect"] == "accept":
        row["ok"] = p.returncode == 0 and report["verdict"] == "accepted"
        row["detail"] = "; ".join(f"{c['name']}: {c['detail'][:300]}" for c in failed)
    elif h["expect"] == "review":
        # A stated narrowing of the contract: accepted for review (exit 0), the named row saying what it refuses.
        named = rows.get(row["check"])
        row["ok"] = p.returncode == 0 and report["verdict"] == "review" and named is not None and \
            named["result"] == "review"
        row["detail"] = (f"{row['check']} {named['result']}: {named['detail'][:300]}" if named is not None else
                         f"the report has no row {row['check']}")
        if failed:
            row["detail"] += "; failed: " + "; ".join(f"{c['name']}: {c['detail'][:200]}" for c in failed)
    else:
        named = rows.get(row["check"])
        row["ok"] = p.returncode == 1 and report["verdict"] == "rejected" and named is not None and \
            named["result"] == "fail"
        if named is None:
            row["detail"] = f"the report has no row {row['check']}; failed: {', '.join(row['failed'])}"
        else:
            row["detail"] = f"{row['check']} {named['result']}: {named['detail'][:300]}"
    return row


def install_packages(selected):
    """Installs the corpus's own kernel library into this interpreter's site-packages (pip) when a selected
    candidate imports it, as a user would install a kernel library."""
    if any(h.get("package") for _, _, h in selected):
        subprocess.run([sys.executable, os.path.join(CORPUS, "packages", "install.py")], check=True)


def run_verify(args, kernels, names):
    selected = cases(kernels, names, [args.only] if args.only else ("honest", "cheats"))
    install_packages(selected)
    results = []
    if args.jobs > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(args.jobs) as pool:
            for r in pool.map(lambda c: verify_one(args, kernels, *c), selected):
                results.append(r)
                print_case(r)
    else:
        for c in selected:
            r = verify_one(args, kernels, *c)
            results.append(r)
            print_case(r)
    return results


def print_case(r):
    mark = {True: "ok  ", False: "FAIL", None: "skip"}[r["ok"]]
    want = "accept" if r["expect"] == "accept" else f"{r['expect']} ({r['check']})"
    wall = f"{r['wall_s']:5.1f} s" if "wall_s" in r else "      "
    print(f"{mark} {r['case']:48} want {want:32} got {r['outcome']:9} {wall}  {r.get('detail', '')[:160]}", flush=True)


def summarize_verify(results):
    def count(folder, ok):
        return sum(1 for r in results if r["case"].startswith(folder) and r["ok"] is ok)
    walls = sorted(r["wall_s"] for r in results if "wall_s" in r)
    # The compile share: the candidate's first call (where torch.compile, Triton's JIT and load_inline compile)
    # and its import (load_inline at module level) against the whole verification's wall time.
    shares = sorted((r["costs"].get("import_s", 0) + r["costs"].get("first_call_s", 0)) / r["wall_s"]
                    for r in results if r.get("costs") and r.get("wall_s"))
    return {"honest_accepted": count("honest", True), "honest_rejected": count("honest", False),
            "honest_skipped": count("honest", None), "cheats_rejected": count("cheats", True),
            "cheats_missed": count("cheats", False), "cheats_skipped": count("cheats", None),
            "wall_s": {"median": statistics.median(walls), "min": walls[0], "max": walls[-1]} if walls else None,
            "compile_share": {"median": statistics.median(shares), "max": shares[-1]} if shares else None}


# ---------------------------------------------------------------------------------------------------- sizes

def kernel_call(kernel, batch, device):
    """The kernel as `rnx bench` calls it (the function, or a Model built under seed 0) and inputs for `batch`."""
    import importlib.util
    import torch
    dtype = getattr(torch, kernel.get("dtypes", ["float32"])[0])
    spec = importlib.util.spec_from_file_location("corpus_" + kernel["name"], os.path.join(CORPUS, kernel["path"]))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    if "inputs" in kernel:
        inputs = [torch.randn(*[batch if d == "B" else int(d) for d in shape.split(",")]).to(dtype).to(device)
                  for shape in kernel["inputs"].values()]
        return module.run, inputs
    module.batch_size = batch
    model = module.Model(*module.get_init_inputs()).to(dtype).to(device)
    inputs = [(t.to(dtype) if t.is_floating_point() else t).to(device) for t in module.get_inputs()]
    return model, inputs


def fix_malloc_thresholds():
    """No mmap for allocations and a trim threshold of 1 GiB, as rnx-runner-worker sets glibc up before anything
    else (docs/runner.md, "Allocator"): without it every multi-MiB output is a fresh mmap with a page fault per
    4 KiB, and a plain loop measures the faults, not the kernel."""
    import ctypes
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_mmap_max = -1, -4
    libc.mallopt(m_mmap_max, 0)
    libc.mallopt(m_trim_threshold, 1 << 30)


def run_sizes(args, kernels, names):
    fix_malloc_thresholds()
    import torch
    torch.set_num_threads(args.threads or os.cpu_count())
    rows = []
    for name in names:
        k = kernels[name]
        if k.get("device", args.device).startswith("cuda") and args.device != "cuda":
            rows.append({"kernel": name, "skipped": "device cuda"})
            print(f"{name:20} skipped (device = cuda)")
            continue
        batches = k.get("batch", [1])
        batches = batches if isinstance(batches, list) else [batches]
        times = {}
        for batch in batches:
            fn, inputs = kernel_call(k, batch, args.device)
            sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
            with torch.no_grad():
                for _ in range(3):
                    fn(*inputs)
                sync()
                calls, start = 0, time.perf_counter()
                while time.perf_counter() - start < 0.3:
                    fn(*inputs)
                    calls += 1
                sync()
                times[batch] = (time.perf_counter() - start) / calls * 1e3
            del fn, inputs
        rows.append({"kernel": name, "ms": times})
        print(f"{name:20} " + "  ".join(f"b{b} {ms:8.3f} ms" for b, ms in times.items()), flush=True)
    return rows


# ---------------------------------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("mode", choices=["aa", "slowdown", "verify", "sizes"])
    ap.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    ap.add_argument("--suite", choices=sorted(SUITES), default="corpus",
                    help="aa/slowdown/sizes: the corpus (rnx.gpu.toml on cuda), the cost suite of a GPU pull "
                         "request (rnx.gpu_cost.toml on cuda; the corpus on cpu) or KernelBench-style problems never "
                         "tuned (rnx.gpu_kb.toml, cuda only)")
    ap.add_argument("--kernel", action="append", default=[], help="only this kernel (repeatable)")
    ap.add_argument("--fraction", type=float, default=0.05, help="slowdown: extra time per call (0.05 = 5%%)")
    ap.add_argument("--reps", type=int, default=1, help="aa/slowdown: paired runs of the whole selection")
    ap.add_argument("--calibrate", type=int, default=0, metavar="N",
                    help="slowdown: N calibration runs before the --reps that count, each setting every variant's "
                         "scale from the ratio it measured (see bench/corpus/slowdown.py)")
    ap.add_argument("--rope", type=float, help="band of equivalence (default 0.02 on cpu, 0.01 on cuda)")
    ap.add_argument("--jobs", type=int, default=1, help="verify: candidates verified at once")
    ap.add_argument("--threads", type=int, default=0, help="sizes: torch threads (0 = every CPU)")
    ap.add_argument("--timeout-s", type=float, default=7200,
                    help="limit of the whole mode: rnx bench is stopped there (what finished is kept); verify starts "
                         "no candidate after it")
    ap.add_argument("--only", choices=["honest", "cheats"], help="verify: only this folder's candidates")
    ap.add_argument("--case-timeout-s", type=float, default=300, help="verify: rnx verify --timeout of each case")
    ap.add_argument("--chunk", type=int, default=0,
                    help="aa/slowdown: kernels per paired rnx bench (0 = all in one run)")
    ap.add_argument("--bench", action="append", default=[], metavar="KEY=VALUE",
                    help="aa/slowdown: a [bench] key added to the manifests (repeatable), to try settings before they "
                         "become defaults, e.g. --bench processes=6 --bench budget_ms=400")
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"), help="the rnx binary")
    ap.add_argument("--out", help="the JSON results (default bench/results/corpus_MODE_DEVICE_STAMP.json)")
    args = ap.parse_args()
    if args.mode != "sizes" and not os.access(args.rnx, os.X_OK):
        fail(f"{args.rnx} is not an executable rnx; build it (ninja -C build rnx rnx-runner-worker "
             f"rnx-verify-worker) or pass --rnx PATH")
    args.rnx = os.path.abspath(args.rnx)
    if args.device not in SUITES[args.suite]:
        fail(f"--suite {args.suite} has no manifest for --device {args.device}: use --device "
             f"{' or '.join(sorted(SUITES[args.suite]))}")
    MANIFEST.update(SUITES[args.suite])
    if args.rope is None:
        args.rope = 0.02 if args.device == "cpu" else 0.01
    for line in args.bench:
        if "=" not in line or not line.split("=", 1)[0].strip():
            fail(f"--bench {line}: write KEY=VALUE as in rnx.toml's [bench] table, e.g. --bench budget_ms=400")
    if args.reps < 1 or args.jobs < 1 or args.chunk < 0 or args.calibrate < 0:
        fail("--reps and --jobs must be 1 or more, --chunk and --calibrate 0 or more")
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = args.out or os.path.join(ROOT, "bench", "results", f"corpus_{args.mode}_{args.device}_{stamp}.json")
    doc = {"mode": args.mode, "device": args.device, "suite": args.suite, "started": stamp, "rnx": args.rnx,
           "kernels": args.kernel or "all", "host": os.uname().nodename, "load_before": os.getloadavg(),
           "bench": args.bench}
    started = time.monotonic()
    args.deadline = started + args.timeout_s if args.mode == "verify" else None
    if args.mode == "sizes":
        kernels = manifest_kernels(os.path.join(CORPUS, MANIFEST[args.device]))
        doc["threads"] = args.threads
        doc["sizes"] = run_sizes(args, kernels, selected(kernels, args.kernel))
        bad = 0
    elif args.mode == "verify":
        kernels = manifest_kernels(os.path.join(CORPUS, "rnx.toml"))
        names = selected(kernels, args.kernel)
        results = run_verify(args, kernels, names)
        doc["cases"] = results
        doc["summary"] = summarize_verify(results)
        s = doc["summary"]
        print(f"\nhonest rewrites: {s['honest_accepted']} accepted, {s['honest_rejected']} rejected, "
              f"{s['honest_skipped']} skipped; cheats: {s['cheats_rejected']} rejected as their header says, "
              f"{s['cheats_missed']} not, {s['cheats_skipped']} skipped")
        if s["wall_s"]:
            print(f"wall time per candidate ({args.jobs} at once): median {s['wall_s']['median']:.1f} s, "
                  f"{s['wall_s']['min']:.1f}-{s['wall_s']['max']:.1f} s"
                  + (f"; the candidate's import and first call (compilation): median "
                     f"{100 * s['compile_share']['median']:.0f}%, at most {100 * s['compile_share']['max']:.0f}%"
                     if s["compile_share"] else ""))
        bad = s["honest_rejected"] + s["cheats_missed"]
    else:
        kernels = manifest_kernels(os.path.join(CORPUS, MANIFEST[args.device]))
        names = selected(kernels, args.kernel)
        if args.mode == "slowdown":
            doc["fraction"] = args.fraction
        doc["rope"] = args.rope
        rows, runs, calibration = paired_rows(args, args.mode, names, list(kernels))
        if calibration:
            doc["calibration"] = calibration
        doc["runs"] = runs
        doc["configs"] = rows
        print()
        print_rows(rows)
        doc["summary"] = summarize_paired(rows, args.mode, args.fraction, args.rope)
        doc["summary"]["phases_s"] = phase_totals(runs)
        print_summary(doc["summary"], args.mode)
        bad = sum(1 for r in runs if "error" in r)
    doc["wall_s"] = round(time.monotonic() - started, 1)
    doc["load_after"] = os.getloadavg()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {out} ({doc['wall_s']:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
