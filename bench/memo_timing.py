#!/usr/bin/env python3
"""Can a memo win a timing, or a head steer its base? Issue 44's adversaries against rnx's own timings, on the CPU.

    python3 bench/memo_timing.py [--rnx build/bin/rnx] [--case hash|double_buffer|ids|sabotage]... [--no-optimize]
                                 [--label NAME] [--out bench/results/memo_timing_NAME.json]

The memos (bench/corpus/cheats/, each accepted by `rnx verify`: they are never wrong):

  hash           gemm_fp32_memo_hash.py: keyed on a SHA-1 of its inputs' bytes; a hit returns a copy of the kept answer
  double_buffer  gemm_fp32_memo_double_buffer.py: the same key, two output buffers; a hit returns the buffer already
                 holding the answer and writes nothing
  ids            embedding_bag_memo_ids.py: the only input is integer token ids, the memo keyed on their bytes

Each goes in a throw-away git repository: commit 1 (branch main) the plain kernel (bench/corpus/kernels/gemm_fp32.py,
embedding_bag.py), commit 2 (branch feature) the memo in its place. Per memo:

  bench + compare  `rnx bench` at each commit (two runs, the manifest's defaults for inputs), then `rnx compare
                   plain.json memo.json`. Where the build has them, the same with `--same-inputs` (every call on the same
                   inputs, what `rnx bench` did by default before issue 44) and with `--fresh-inputs` (the earlier flag:
                   floating-point inputs redrawn, integers kept).
  gate stored      `rnx gate --results plain.json` as a push of main, then `rnx gate --results memo.json` as pull
                   request 1 against it (an embedded store).
  gate paired      `rnx gate --mode paired --pair-ref main` on the feature commit (a store of its own).
  optimize (ids)   `rnx optimize` of bench/corpus/optimize/embedding_bag.py with the scripted rewriter of tests/optimize
                   (RNX_TEST_CANDIDATE_FILES): first the memo (bench/corpus/optimize/embedding_bag_memo.py), then the same
                   code without the memo (the reference, its class renamed ModelNew); each one's speedup and which is kept.

The speedup is the verdict's base/head (1 / ratio): goal at most 1.1 for every memo (issue 44, "Must show").

The sabotage (bench/corpus/cheats/gemm_fp32_sabotage_base.py): a real 2x regression of gemm_fp32 that, when the base
revision's module shares its process, makes torch.matmul (which only the base calls) do the product four times.
Commit 2 is that head, a branch "control" holds the same head with the patch's call taken out; each is gated with
`rnx gate --mode paired --pair-ref main`. Goal: BLOCK (exit 1) for both.

Small budgets, so that each configuration takes a few seconds on the 2-core machine: the scratch manifest has
[bench] threads = 1, processes = 2, max_processes = 4, warmup_ms = 100, budget_ms = 300, total_budget_s = 6, and
[gate] rope = 0.02 (the verdicts are still the gate's rule; a memo's effect is many times that band). The optimize
run uses --processes 2 and the optimize corpus's own manifest (one thread). Prints a table, writes the JSON
(bench/results/memo_timing.json unless --out or --label says otherwise) with every verdict's ratio, decision and
reason.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "bench", "corpus")
REWRITER = os.path.join(ROOT, "tests", "optimize", "fixtures", "rewriter.py")

MANIFEST = """[project]
name = "memo-timing"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "cpu"

[bench]
threads = 1
processes = 2
max_processes = 4
warmup_ms = 100
budget_ms = 300
total_budget_s = 6

[gate]
rope = 0.02
probability = 0.95

[[kernel]]
name = "{name}"
path = "kernels/{name}.py"
{inputs}"""

# case -> (the scratch kernel's name, its inputs line, the plain kernel, the head that replaces it)
CASES = {
    "hash": ("gemm", 'inputs = { a = "B,256,512", b = "512,512" }\n', "kernels/gemm_fp32.py",
             "cheats/gemm_fp32_memo_hash.py"),
    "double_buffer": ("gemm", 'inputs = { a = "B,256,512", b = "512,512" }\n', "kernels/gemm_fp32.py",
                      "cheats/gemm_fp32_memo_double_buffer.py"),
    "ids": ("embedding_bag", "", "kernels/embedding_bag.py", "cheats/embedding_bag_memo_ids.py"),
    "sabotage": ("gemm", 'inputs = { a = "B,256,512", b = "512,512" }\n', "kernels/gemm_fp32.py",
                 "cheats/gemm_fp32_sabotage_base.py"),
}
SABOTAGE_CALL = "        _sabotage_base()\n"  # the head's one call of its patch (taken out for the control)


def log(message):
    print(message, file=sys.stderr, flush=True)


def sh(cmd, cwd, env=None, timeout=900):
    """Runs cmd; returns (exit code, stdout, stderr, seconds)."""
    log("$ " + " ".join(cmd))
    began = time.time()
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.time() - began


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, "-c", "user.name=memo bench", "-c", "user.email=memo@example.invalid",
                           *args], check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True).stdout.strip()


def read(relative):
    with open(os.path.join(CORPUS, relative), encoding="utf-8") as f:
        return f.read()


def head_source(case):
    """The file that replaces the plain kernel at commit 2 (a KernelBench head carries its own get_inputs())."""
    return read(CASES[case][3])


def make_repo(work, case):
    """Commit 1 on main (the plain kernel), commit 2 on feature (the head); for the sabotage also a branch control
    (the head without its patch). Returns {branch: sha}."""
    name, inputs, plain, _ = CASES[case]
    repo = os.path.join(work, "repo")
    os.makedirs(os.path.join(repo, "kernels"))
    with open(os.path.join(repo, "rnx.toml"), "w") as f:
        f.write(MANIFEST.format(name=name, inputs=inputs))
    kernel = os.path.join(repo, "kernels", name + ".py")
    with open(kernel, "w") as f:
        f.write(read(plain))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "the plain kernel")
    shas = {"main": git(repo, "rev-parse", "HEAD")}
    heads = {"feature": head_source(case)}
    if case == "sabotage":
        assert heads["feature"].count(SABOTAGE_CALL) == 1, "the sabotaging head's call of its patch moved"
        heads["control"] = heads["feature"].replace(SABOTAGE_CALL, "        pass  # the patch's call taken out\n")
    for branch, source in heads.items():
        git(repo, "checkout", "-q", "-b", branch, shas["main"])
        with open(kernel, "w") as f:
            f.write(source)
        git(repo, "commit", "-qam", "the head: " + branch)
        shas[branch] = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "main")
    return repo, shas


def bench_flags(rnx):
    """The input modes this build's `rnx bench` offers: default always, same / fresh where its --help lists them."""
    text = subprocess.run([rnx, "bench", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    modes = {"default": []}
    if "--same-inputs" in text:
        modes["same"] = ["--same-inputs"]
    if "--fresh-inputs" in text:
        modes["fresh"] = ["--fresh-inputs"]
    return modes


def load(path):
    with open(path) as f:
        return json.load(f)


def result_of(run_path):
    """The run's one result: status, median of its samples, bound, timed_inputs."""
    run = load(run_path)
    r = run["results"][0]
    samples = sorted(r.get("samples_ms") or [])
    return {"status": r.get("status"), "median_ms": samples[len(samples) // 2] if samples else None,
            "samples": len(samples), "timed_inputs": r.get("timed_inputs", "same"),
            "write_ms": (r.get("bound") or {}).get("write_ms"), "pairing": r.get("pairing") or run.get("pairing")}


def config_of(verdict):
    """The verdict's one configuration: ratio (head/base), speedup, decision, reason, beyond_physics."""
    c = (verdict.get("configs") or [{}])[0]
    ratio = c.get("ratio")
    return {"verdict": verdict.get("verdict"), "decision": c.get("decision"), "ratio": ratio,
            "speedup": (1 / ratio) if ratio else None, "ci95": c.get("ci95"),
            "beyond_physics": bool(c.get("beyond_physics")), "reason": (c.get("reason") or "")[:600],
            "verdict_reason": (verdict.get("reason") or "")[:600]}


def bench_compare(rnx, repo, shas, mode, flags):
    """`rnx bench` at main and at feature, then `rnx compare`; returns the row and the two run files."""
    runs = {}
    seconds = 0.0
    for branch, label in (("main", "plain"), ("feature", "memo")):
        git(repo, "checkout", "-q", branch)
        out = os.path.join(repo, ".rnx", f"{label}-{mode}.json")
        code, _, err, s = sh([rnx, "bench", "--config", "rnx.toml", "--out", out, "--quiet", *flags], repo)
        seconds += s
        if code != 0 or not os.path.exists(out):
            return {"step": f"bench+compare ({mode})", "error": f"rnx bench exit {code}: {err[-800:]}"}, runs
        runs[label] = out
    git(repo, "checkout", "-q", "main")
    code, stdout, err, _ = sh([rnx, "compare", runs["plain"], runs["memo"], "--format", "json"], repo)
    try:
        verdict = json.loads(stdout)
    except json.JSONDecodeError:
        return {"step": f"bench+compare ({mode})", "error": f"rnx compare exit {code}: {err[-800:]}"}, runs
    return {"step": f"bench+compare ({mode})", "flags": " ".join(flags), "exit": code, **config_of(verdict),
            "plain": result_of(runs["plain"]), "memo": result_of(runs["memo"]), "seconds": round(seconds, 1)}, runs


def gate_stored(rnx, repo, shas, runs):
    """The plain run stored as main's baseline (a push), the memo run gated as pull request 1 against it."""
    store = os.path.join(repo, ".rnx", "stored.db")
    code, _, err, s1 = sh([rnx, "gate", "--results", runs["plain"], "--branch", "main", "--commit", shas["main"],
                           "--store", store, "--no-github", "--out-dir", os.path.join(repo, ".rnx", "push")], repo)
    if code != 0:
        return {"step": "gate stored", "error": f"push gate exit {code}: {err[-800:]}"}
    out = os.path.join(repo, ".rnx", "stored")
    code, _, err, s2 = sh([rnx, "gate", "--results", runs["memo"], "--mode", "stored", "--branch", "feature",
                           "--base-branch", "main", "--pull-request", "1", "--commit", shas["feature"], "--store",
                           store, "--no-github", "--out-dir", out], repo)
    if not os.path.exists(os.path.join(out, "verdict.json")):
        return {"step": "gate stored", "error": f"rnx gate exit {code}: {err[-800:]}"}
    return {"step": "gate stored", "exit": code, **config_of(load(os.path.join(out, "verdict.json"))),
            "seconds": round(s1 + s2, 1)}


def gate_paired(rnx, repo, shas, branch="feature", step="gate paired"):
    """`rnx gate --mode paired --pair-ref main` with `branch` checked out, as pull request 1."""
    git(repo, "checkout", "-q", branch)
    out = os.path.join(repo, ".rnx", "paired-" + branch)
    code, stdout, err, s = sh([rnx, "gate", "--mode", "paired", "--pair-ref", shas["main"], "--branch", branch,
                               "--base-branch", "main", "--pull-request", "1", "--commit", shas[branch], "--store",
                               os.path.join(repo, ".rnx", "paired-" + branch + ".db"), "--no-github", "--out-dir", out],
                              repo)
    git(repo, "checkout", "-q", "main")
    if not os.path.exists(os.path.join(out, "verdict.json")):
        return {"step": step, "error": f"rnx gate exit {code}: {err[-800:]}"}
    row = {"step": step, "exit": code, **config_of(load(os.path.join(out, "verdict.json"))), "seconds": round(s, 1)}
    run = os.path.join(out, "run.json")
    if os.path.exists(run):
        row["head"] = result_of(run)
    # What the run printed about its pairing and any check of the base beside the head (the lines naming the base).
    row["pairing_lines"] = [line for line in (stdout + err).splitlines()
                            if line.startswith(("[pairing]", "[control]"))][:6]
    row["base_check"] = base_check(row["reason"] + " " + " ".join(row["pairing_lines"]))
    return row


def base_check(text):
    """What a paired run said of the base's time beside the head against the base alone: 'base 1.009x beside the head,
    in-process' or '... -> by process'; None where it said nothing (a build without that check)."""
    found = re.search(r"base (?:ran |checked beside its twin: beside the head it ran )([0-9.]+)x", text)
    if not found:
        return None
    moved = "separate processes" in text or "paired by process" in text
    if not moved:
        return f"base {found.group(1)}x beside the head, kept in-process"
    why = "by the load order" if "loaded first is" in text else "by that check"
    return f"base {found.group(1)}x beside the head, paired by process ({why})"


def optimize_ids(rnx, work):
    """rnx optimize of embedding_bag: the memo first, then the same code without the memo."""
    scratch = os.path.join(work, "optimize")
    shutil.copytree(os.path.join(CORPUS, "optimize"), scratch)  # the links are copied as the files they name
    plain = os.path.join(work, "embedding_bag_plain.py")
    with open(plain, "w") as f:
        f.write("# The reference itself as a rewrite: the same code as the memo without the memo.\n" +
                read("kernels/embedding_bag.py").replace("class Model(", "class ModelNew("))
    candidates = [os.path.join(CORPUS, "optimize", "embedding_bag_memo.py"), plain]
    record = os.path.join(work, "optimize.json")
    env = dict(os.environ, RNX_TEST_CANDIDATE_FILES=",".join(candidates))
    code, _, err, s = sh([rnx, "optimize", "--config", os.path.join(scratch, "rnx.toml"), "--kernel",
                          "embedding_bag", "--budget", "2", "--rewriter", "command:" + REWRITER, "--no-profile",
                          "--no-commit", "--work-dir", os.path.join(work, "loop"), "--json-out", record,
                          "--processes", "2"], work, env=env, timeout=1200)
    if code != 0 or not os.path.exists(record):
        return [{"step": "optimize", "error": f"rnx optimize exit {code}: {err[-800:]}"}]
    rows = []
    for attempt, name in zip(load(record)["attempts"], ("memo", "plain")):
        speedup = attempt.get("speedup")
        rows.append({"step": "optimize", "candidate": name, "status": attempt.get("status"),
                     "kept": attempt.get("kept"), "speedup": speedup, "p_faster": attempt.get("p_faster"),
                     "reason": (attempt.get("reason") or "")[:600], "seconds": round(s, 1)})
    return rows


def run_case(args, case, modes):
    work = tempfile.mkdtemp(prefix=f"rnx-memo-{case}-")
    try:
        repo, shas = make_repo(work, case)
        rows = []
        if case == "sabotage":
            rows.append(gate_paired(args.rnx, repo, shas, "feature", "gate paired (sabotaging head)"))
            rows.append(gate_paired(args.rnx, repo, shas, "control", "gate paired (control: no patch)"))
        else:
            kept = None
            for mode, flags in modes.items():
                row, runs = bench_compare(args.rnx, repo, shas, mode, flags)
                rows.append(row)
                if mode == "default":
                    kept = runs
            if kept and len(kept) == 2:
                rows.append(gate_stored(args.rnx, repo, shas, kept))
            rows.append(gate_paired(args.rnx, repo, shas))
            if case == "ids" and not args.no_optimize:
                rows.extend(optimize_ids(args.rnx, work))
        for r in rows:
            r["case"] = case
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def note_of(r):
    """One short note: the paired run's check of the base, or why a result was not timed."""
    if r.get("base_check"):
        return r["base_check"]
    reason = r.get("reason") or ""
    if r.get("decision") == "broken" or r.get("status") == "broken":
        return reason.split(":")[0][:70] if "timed call" not in reason else "a timed call's output differs from the reference"
    if r.get("beyond_physics"):
        return "beyond the physical limit"
    return ""


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def code_state():
    """The commit of this checkout and the tracked files that differ from it (the build may hold them)."""
    def out(*cmd):
        return subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
    return {"commit": out("git", "rev-parse", "HEAD").strip(),
            "modified": [line[3:] for line in out("git", "status", "--short", "--untracked-files=no").splitlines()]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="only these cases (default: all)")
    ap.add_argument("--no-optimize", action="store_true", help="skip rnx optimize (the ids case's longest step)")
    ap.add_argument("--label", help="a name for this run, in the JSON and its default file name")
    ap.add_argument("--out", help="default bench/results/memo_timing[_LABEL].json")
    args = ap.parse_args()
    args.rnx = os.path.abspath(args.rnx)
    out = args.out or os.path.join(ROOT, "bench", "results",
                                   "memo_timing" + (f"_{args.label}" if args.label else "") + ".json")
    modes = bench_flags(args.rnx)
    code = code_state()  # at the start: others may edit the checkout while this runs
    began = time.time()
    rows = []
    for case in args.case or ["hash", "double_buffer", "ids", "sabotage"]:
        rows.extend(run_case(args, case, modes))

    print(f"{'case':<14} {'step':<34} {'verdict':<7} {'exit':>4} {'decision':<11} {'speedup':>8} {'beyond':<6} "
          f"{'plain ms':>9} {'memo ms':>9}  note")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:<14} {r['step']:<34} ERROR: {r['error'][:300]}")
            continue
        step = r["step"] + (f" {r['candidate']}" if "candidate" in r else "")
        decision = r.get("decision") or r.get("status")
        verdict = r.get("verdict") or ("kept" if r.get("kept") else "-")
        print(f"{r['case']:<14} {step:<34} {verdict:<7} {fmt(r.get('exit'), 'd'):>4} {decision or '-':<11} "
              f"{fmt(r.get('speedup')):>8} {'yes' if r.get('beyond_physics') else 'no':<6} "
              f"{fmt((r.get('plain') or {}).get('median_ms'), '.4f'):>9} "
              f"{fmt((r.get('memo') or {}).get('median_ms'), '.4f'):>9}  {note_of(r)}")

    memo_rows = [r for r in rows if r["case"] != "sabotage" and "error" not in r and
                 (r["step"].startswith(("bench+compare (default)", "gate")) or r.get("candidate") == "memo")]
    worst = max((r["speedup"] for r in memo_rows if r.get("speedup")), default=None)
    sabotage = next((r for r in rows if r["step"] == "gate paired (sabotaging head)"), None)
    summary = {"memo_speedup_max": worst, "memo_goal_met": worst is not None and worst <= 1.1,
               "memo_kept_by_optimize": any(r.get("candidate") == "memo" and r.get("kept") for r in rows),
               "sabotage_verdict": sabotage.get("verdict") if sabotage else None,
               "sabotage_goal_met": bool(sabotage) and sabotage.get("verdict") == "BLOCK"}
    print()
    print(f"largest memo speedup with the defaults (bench+compare, gate, optimize): {fmt(worst)} (goal <= 1.10); "
          f"a memo kept by rnx optimize: {'yes' if summary['memo_kept_by_optimize'] else 'no'}; the sabotaging "
          f"head in rnx gate --mode paired: {summary['sabotage_verdict']} (goal BLOCK); {time.time() - began:.0f} s")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"command": " ".join(sys.argv), "label": args.label,
                   "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "machine": os.uname().nodename,
                   "cpus": os.cpu_count(), "load_average": os.getloadavg(), "code": code,
                   "bench_input_modes": modes, "seconds": round(time.time() - began, 1), "rows": rows,
                   "summary": summary}, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.relpath(out, ROOT)}")


if __name__ == "__main__":
    main()
