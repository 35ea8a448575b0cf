#!/usr/bin/env python3
"""A 4-shard CI matrix simulated on this machine, judged once (docs/scaling.md).

service: 4 shard jobs against the real rnx-server on 127.0.0.1 (--shard-timeout 8): two upload at once, one late,
         one never; the matrix's final job (rnx gate --group-verdict) waits for the group, gets the verdict over the
         three arrived shards (the same decisions and ratios as the unsharded run on those configurations), WARN
         naming the missing shard's configurations, and posts one comment and one status to the fake GitHub API;
         the shard jobs post none. The missing shard arriving after the group was formed is refused (409, exit 2).
merge:   the same from artifact files: rnx gate --merge over the arrived shards' documents, the embedded store.
runner:  the real runner (rnx bench --shard K/2 --self-check on a cheap CPU kernel): the shards split the suite,
         each a complete paired run; their four documents merged give a paired verdict on every configuration,
         and shard 1's alone name shard 2's configurations as not measured.

The service and merge cases use synthetic run documents (the merge and the verdict are the point, not the
measurement); the runner case measures.

  shards_e2e.py --rnx build/bin/rnx --server build/bin/rnx-server --case service
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (BASE_SHA, MERGE_SHA, Failure, Harness, check, pull_request_payload,  # noqa: E402
                     push_payload, synthetic_run)

PROJECT = "sharded-demo"
KERNELS = ["k%d" % i for i in range(8)]
SHARDS = 4
RUN_ID = "777"
GROUP = "%s-%s-1" % (MERGE_SHA, RUN_ID)


def key(c):
    return "%s/%s/%s/b%d" % (c["kernel"], c["runtime"], c["dtype"], c["batch"])


def suite_docs(h):
    """The baseline (push) run, the unsharded head run (k1 20% faster, the rest unchanged) and its 4 shards."""
    base = synthetic_run(PROJECT, seed=1, kernels=KERNELS, commit=BASE_SHA, branch="main")
    head = synthetic_run(PROJECT, seed=2, kernels=KERNELS, commit=MERGE_SHA, branch="faster-k1", base_branch="main",
                         pull_request=7)
    for r in head["results"]:
        if r["kernel"] == "k1":
            r["samples_ms"] = [round(s * 0.8, 6) for s in r["samples_ms"]]
    # Equal costs: the split by count deals the configurations, in key order, to shards 1..4 in turn.
    ordered = sorted(head["results"], key=lambda r: (r["kernel"], r["runtime"], r["dtype"], r["batch"]))
    assignment = [{"kernel": r["kernel"], "runtime": r["runtime"], "dtype": r["dtype"], "batch": r["batch"],
                   "shard": i % SHARDS + 1} for i, r in enumerate(ordered)]
    shards = []
    for k in range(1, SHARDS + 1):
        mine = {(a["kernel"], a["batch"]) for a in assignment if a["shard"] == k}
        doc = dict(head, results=[r for r in head["results"] if (r["kernel"], r["batch"]) in mine])
        doc["shard"] = {"index": k, "count": SHARDS, "group": GROUP, "balanced_by": "count", "assignment": assignment}
        shards.append(h.write_json("shard%d.json" % k, doc))
    missing = sorted(key(dict(a, runtime=a["runtime"])) for a in assignment if a["shard"] == 4)
    return h.write_json("base.json", base), h.write_json("head.json", head), shards, missing


def pr_env(h, extra=None):
    env = h.event_env("pull_request", pull_request_payload(number=7), "refs/pull/7/merge", MERGE_SHA,
                      dict({"GITHUB_RUN_ID": RUN_ID, "GITHUB_RUN_ATTEMPT": "1"}, **(extra or {})))
    return env


def push_baseline(h, base, store_args):
    env = h.event_env("push", push_payload(after=BASE_SHA), "refs/heads/main", BASE_SHA)
    h.run_rnx(["gate", "--results", base, "--no-github", *store_args], env, expect=0)


def unsharded_verdict(h, base, head):
    """The unsharded head run judged against the same baseline in an embedded store of its own, no GitHub."""
    store = h.path("unsharded.db")
    push_baseline(h, base, ["--store", store])
    env = pr_env(h)
    h.run_rnx(["gate", "--results", head, "--no-github", "--store", store, "--out-dir", h.path("unsharded")], env)
    with open(h.path("unsharded", "verdict.json")) as f:
        return json.load(f)


def same(a, b):
    """Equal, numbers to 1e-12 relative: a verdict that went through the service's JSON is the same verdict."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
    return a == b


def check_group_verdict(verdict, unsharded, missing):
    check(verdict["verdict"] == "WARN", "a missing shard makes the verdict WARN, got %s: %s" % (
        verdict["verdict"], verdict["reason"]))
    check("shard 4/4 of run group %s did not arrive" % GROUP in verdict["reason"], "the reason names the missing "
          "shard: " + verdict["reason"])
    by_key = {key(c): c for c in verdict["configs"]}
    check(sorted(by_key) == sorted(key(c) for c in unsharded["configs"]), "every configuration of the suite is in "
          "the verdict: %s" % sorted(by_key))
    for k in missing:
        c = by_key[k]
        check(c["decision"] == "missing" and "shard 4/4" in c["reason"] and "did not arrive" in c["reason"],
              "%s is named not measured: %r" % (k, c))
    for u in unsharded["configs"]:
        if key(u) in missing:
            continue
        c = by_key[key(u)]
        for field in ("decision", "ratio", "ci95", "p_faster", "p_slower", "p_equivalent", "n_base", "n_head"):
            check(same(c.get(field), u.get(field)), "%s: %s %r sharded, %r unsharded" % (
                key(u), field, c.get(field), u.get(field)))
    check(by_key["k1/eager/float32/b8"]["decision"] == "faster", "k1 measured faster in its shard")
    check(unsharded["verdict"] == "PASS", "the unsharded run passes (k1 faster, the rest equivalent)")


def github_posts(h):
    comments = [r for r in h.github_requests() if r["method"] in ("POST", "PATCH") and "/comments" in r["path"]]
    statuses = [r for r in h.github_requests() if r["method"] == "POST" and "/statuses/" in r["path"]]
    return comments, statuses


def case_service(h):
    """Shards upload to the real rnx-server; one late, one missing; the final job reports once."""
    h.start_service(PROJECT, ["--shard-timeout", "8"])
    h.start_github({})
    base, head, shards, missing = suite_docs(h)
    unsharded = unsharded_verdict(h, base, head)
    push_baseline(h, base, ["--service-url", h.service_url])

    def shard_job(path):
        return subprocess.Popen([h.rnx, "gate", "--results", path, "--service-url", h.service_url, "--project",
                                 PROJECT, "--out-dir", path + ".out"], env=pr_env(h), cwd=h.dir,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    started = time.time()
    # The final job asks before any shard has landed (a matrix does not order its jobs): it must wait, not fail.
    final = subprocess.Popen([h.rnx, "gate", "--group-verdict", "--service-url", h.service_url, "--project", PROJECT,
                              "--out-dir", h.path("final")], env=pr_env(h), cwd=h.dir, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    time.sleep(1.5)
    first = [shard_job(shards[0]), shard_job(shards[1])]  # two at once
    for p in first:
        out, _ = p.communicate(timeout=60)
        check(p.returncode == 0, "a shard job exits 0: " + out)
        check("run group %s" % GROUP in out and "shards arrived" in out, "a shard job says what arrived: " + out)
    time.sleep(2)  # the late shard, still inside the group's timeout
    late = shard_job(shards[2])
    out, _ = late.communicate(timeout=60)
    check(late.returncode == 0, "the late shard is taken: " + out)
    check(not github_posts(h)[0] and not github_posts(h)[1], "shard jobs post no comment or status")
    out, _ = final.communicate(timeout=90)
    waited = time.time() - started
    check(final.returncode == 0, "the final job exits 0 on WARN: " + out)
    check("no shard of run group %s has arrived yet" % GROUP in out, "the final job waited for the first shard: " + out)
    check(waited >= 7, "the final job waited for the group's timeout (%.1f s)" % waited)
    with open(h.path("final", "verdict.json")) as f:
        verdict = json.load(f)
    check_group_verdict(verdict, unsharded, missing)
    comments, statuses = github_posts(h)
    check(len(comments) == 1, "one PR comment, got %d" % len(comments))
    check(len(statuses) == 1 and statuses[0]["body"]["state"] == "success" and
          statuses[0]["body"]["description"].startswith("WARN"), "one status, WARN: %r" % statuses)
    for k in missing:
        check(k in comments[0]["body"]["body"], "the comment names %s" % k)
    # The missing shard, after the group was formed: refused with what to do, and the verdict stands.
    p = shard_job(shards[3])
    out, _ = p.communicate(timeout=60)
    check(p.returncode == 2 and "was formed as run" in out and "re-run the workflow" in out,
          "a shard after the group's verdict is refused: " + out)


def case_merge(h):
    """The same from artifacts: rnx gate --merge over the arrived shards' files, the embedded store."""
    h.start_github({})
    base, head, shards, missing = suite_docs(h)
    unsharded = unsharded_verdict(h, base, head)
    store = h.path("merged.db")
    push_baseline(h, base, ["--store", store])
    r = h.run_rnx(["gate", "--merge", shards[2], shards[0], shards[1], "--store", store, "--project", PROJECT,
                   "--out-dir", h.path("merged")], pr_env(h), expect=0)
    with open(h.path("merged", "verdict.json")) as f:
        verdict = json.load(f)
    check_group_verdict(verdict, unsharded, missing)
    comments, statuses = github_posts(h)
    check(len(comments) == 1 and len(statuses) == 1, "one comment and one status: %d, %d" % (len(comments),
                                                                                             len(statuses)))
    check(r.outputs.get("verdict") == "WARN", "the verdict output is WARN")
    # Every shard: the same verdict as the unsharded run, PASS.
    r = h.run_rnx(["gate", "--merge", *shards, "--store", store, "--project", PROJECT, "--no-github",
                   "--out-dir", h.path("all")], pr_env(h), expect=0)
    with open(h.path("all", "verdict.json")) as f:
        whole = json.load(f)
    check(whole["verdict"] == "PASS", "all four shards: PASS as unsharded: " + whole["reason"])
    # Documents of different groups are not merged: exit 2 naming both.
    other = json.load(open(shards[3]))
    other["shard"]["group"] = "another-run-1"
    r = h.run_rnx(["gate", "--merge", shards[0], h.write_json("other.json", other), "--store", store, "--no-github",
                   "--out-dir", h.path("bad")], pr_env(h), expect=2)
    check("different run groups" in r.stderr + r.stdout, "the refusal names the groups: " + r.stderr)


def case_runner(h):
    """The real runner: rnx bench --shard K/2 --self-check, then the four documents merged."""
    os.makedirs(h.path("kernels"), exist_ok=True)
    with open(h.path("kernels", "scale.py"), "w") as f:
        f.write("def run(x):\n    return x * 2.0\n")
    with open(h.path("rnx.toml"), "w") as f:
        f.write('[project]\nname = "%s"\n\n[defaults]\nruntimes = ["eager"]\ndtypes = ["float32"]\n'
                'batch = [1, 2, 4]\ndevice = "cpu"\n\n[bench]\nprocesses = 2\nsamples = 8\nmin_samples = 8\n'
                'budget_ms = 40\nwarmup_ms = 10\nthreads = 1\n\n[[kernel]]\nname = "scale"\npath = '
                '"kernels/scale.py"\nentry = "run"\ninputs = { x = "B,64" }\n' % PROJECT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RNX_"))}
    docs = {}
    for k in (1, 2):
        out, base_out = h.path("s%d.json" % k), h.path("s%d-base.json" % k)
        r = subprocess.run([h.rnx, "bench", "--shard", "%d/2" % k, "--run-group", "local-1-1", "--self-check",
                            "--out", out, "--base-out", base_out, "--commit", MERGE_SHA, "--branch", "topic",
                            "--base-branch", "main", "--quiet"], env=env, cwd=h.dir, capture_output=True, text=True,
                           timeout=300)
        check(r.returncode in (0, 1), "rnx bench --shard %d/2: %s" % (k, r.stderr))
        docs[k] = (out, base_out, json.load(open(out)))
    got = {k: sorted("%s/b%d" % (r["kernel"], r["batch"]) for r in d[2]["results"]) for k, d in docs.items()}
    check(sorted(got[1] + got[2]) == ["scale/b1", "scale/b2", "scale/b4"] and not set(got[1]) & set(got[2]),
          "the shards split the suite: %r" % got)
    check(docs[1][2]["shard"]["assignment"] == docs[2][2]["shard"]["assignment"], "both computed the same split")
    check(json.load(open(docs[1][1]))["shard"]["index"] == 1, "the base document records its shard too")
    r = h.run_rnx(["gate", "--merge", docs[1][0], docs[1][1], docs[2][0], docs[2][1], "--mode", "paired",
                   "--store", h.path("store.db"), "--no-github", "--out-dir", h.path("merged")], env)
    check(r.returncode in (0, 1), "rnx gate --merge: " + r.stderr + r.stdout)
    verdict = json.load(open(h.path("merged", "verdict.json")))
    check(sorted(key(c) for c in verdict["configs"]) == ["scale/eager/float32/b%d" % b for b in (1, 2, 4)] and
          all(c["decision"] not in ("missing", "new") for c in verdict["configs"]),
          "a paired verdict on every configuration: %r" % verdict["configs"])
    r = h.run_rnx(["gate", "--merge", docs[1][0], docs[1][1], "--mode", "paired", "--store", h.path("store.db"),
                   "--no-github", "--out-dir", h.path("half")], env)
    verdict = json.load(open(h.path("half", "verdict.json")))
    named = sorted(key(c) for c in verdict["configs"] if c["decision"] == "missing")
    check(verdict["verdict"] != "PASS" and named == sorted("scale/eager/float32/" + s.split("/")[1] for s in got[2]),
          "shard 1 alone names shard 2's configurations: %s %r" % (verdict["verdict"], named))


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rnx", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="default: all")
    ap.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = ap.parse_args()
    failed = 0
    for name in args.case or sorted(CASES):
        h = Harness(os.path.abspath(args.rnx), os.path.abspath(args.server), "shards-" + name)
        started = time.time()
        try:
            CASES[name](h)
            print("ok   %-10s %5.1fs" % (name, time.time() - started), flush=True)
        except Exception:  # noqa: BLE001 - every failure is reported, then the next case runs
            failed += 1
            print("FAIL %-10s (folder %s)" % (name, h.dir), flush=True)
            traceback.print_exc()
        finally:
            h.close()
            if not args.keep and not failed:
                shutil.rmtree(h.dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
