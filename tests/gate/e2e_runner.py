#!/usr/bin/env python3
"""`rnx gate` end to end with the real runner: it runs `rnx bench` on an example kernel (examples/kernels),
uploads to the real rnx-server, and reports to the fake GitHub API, as a pull request would.

Sample counts are small (6 processes of at most 8 samples and 100 ms each; batch 8 keeps one call near a
millisecond) so the whole file takes about a minute on two cores. Six processes, because the time of this kernel
drifts 1.5-2x within seconds on the shared 2-core machine (its L3 is shared with other tenants), and the
two-level posterior needs several processes a side to tell that drift from a change. The thresholds are loosened for this shared test machine through [gate.runners.self-hosted]
(RUNNER_ENVIRONMENT is self-hosted here), which also checks that table is picked up; the injected
slowdown is 4x so it is BLOCK however noisy the machine.

  e2e_runner.py --rnx build/bin/rnx --server build/bin/rnx-server --examples examples --case stored
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (BASE_SHA, HEAD_SHA, MERGE_SHA, Failure, Harness, check, http_get,  # noqa: E402
                     pull_request_payload, push_payload)

PROJECT = "rnx-examples"
MANIFEST = """[project]
name = "@PROJECT@"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [8]
device   = "cpu"

[bench]
processes   = 6
samples     = 8
min_samples = 8
budget_ms   = 100
warmup_ms   = 30
threads     = 1

[[kernel]]
name   = "softmax"
path   = "kernels/softmax.py"
inputs = { x = "B,64,1024" }

[gate]
rope        = 0.02
probability = 0.95
min_samples = 8

# Two short benchmark runs minutes apart on a shared two-core machine differ by more than 2%.
[gate.runners.self-hosted]
rope        = 0.30
probability = 0.90
""".replace("@PROJECT@", PROJECT)

# Appended to the example kernel: the same result, computed four times.
SLOWDOWN = """

_rnx_e2e_original_run = run


def run(x):
    for _ in range(3):
        _rnx_e2e_original_run(x)
    return _rnx_e2e_original_run(x)
"""


def make_project(h, examples, slow):
    os.makedirs(h.path("kernels"), exist_ok=True)
    source = open(os.path.join(examples, "kernels", "softmax.py"), encoding="utf-8").read()
    with open(h.path("kernels", "softmax.py"), "w", encoding="utf-8") as f:
        f.write(source + (SLOWDOWN if slow else ""))
    with open(h.path("rnx.toml"), "w", encoding="utf-8") as f:
        f.write(MANIFEST)


def git(h, *args):
    r = subprocess.run(["git", *args], cwd=h.dir, capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, GIT_AUTHOR_NAME="e2e", GIT_AUTHOR_EMAIL="e2e@example.invalid",
                                GIT_COMMITTER_NAME="e2e", GIT_COMMITTER_EMAIL="e2e@example.invalid"))
    check(r.returncode == 0, "git %s failed: %s" % (" ".join(args), r.stderr))
    return r.stdout.strip()


def base_repository(h, examples):
    """The fake GitHub started, and a git repository whose one commit (returned) holds the unchanged example."""
    h.start_github({})
    make_project(h, examples, slow=False)
    git(h, "init", "-q", "-b", "main")
    git(h, "add", "rnx.toml", "kernels")
    git(h, "commit", "-q", "-m", "base")
    return git(h, "rev-parse", "HEAD")


def statuses(h):
    return [r["body"] for r in h.github_requests() if r["method"] == "POST" and "/statuses/" in r["path"]]


def case_stored(h, examples):
    """Baseline on push, PASS on identical code, BLOCK on the injected slowdown: all measured for real."""
    h.start_service(PROJECT)
    h.start_github({})
    make_project(h, examples, slow=False)
    env = h.event_env("push", push_payload(after=BASE_SHA), "refs/heads/main", BASE_SHA,
                      {"RNX_SERVICE_URL": h.service_url})
    r = h.run_rnx(["gate"], env, expect=0)
    check(r.outputs.get("verdict") == "PASS", "the first baseline: PASS, got %r" % r.outputs.get("verdict"))
    check("first baseline: nothing to compare" in r.outputs.get("reason", ""), "push reason: %r" % r.outputs.get("reason"))
    run = json.load(open(h.path(".rnx", "run.json")))
    check(run["commit"] == BASE_SHA and run["branch"] == "main" and run.get("pull_request") is None,
          "the push run is filed under main at the pushed commit")
    check(run["results"][0]["status"] == "ok" and len(run["results"][0]["samples_ms"]) >= 16,
          "the runner measured the example kernel: %r" % run["results"][0])

    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA,
                      {"RNX_SERVICE_URL": h.service_url})
    r = h.run_rnx(["gate"], env, expect=0)
    # Identical code passes; where the machine drifted more than the posterior can rule out, the honest answer
    # is abstain (WARN). Never `slower`, never BLOCK.
    verdict = r.outputs.get("verdict")
    # The verdict line counts the decisions ("1 abstain", "2 slower"); the rule line below the table speaks of
    # "a slower's interval" whatever was decided, so only the verdict line is searched.
    verdict_line = next((l for l in r.stdout.splitlines() if l.startswith("rnx verdict:")), "")
    check(verdict == "PASS" or (verdict == "WARN" and "1 abstain" in verdict_line and "slower" not in verdict_line),
          "identical code passes (or abstains), got %r:\n%s" % (verdict, r.stdout))
    if verdict == "WARN":
        print("note: identical code abstained on this machine:\n" + r.stdout)
    check("thresholds of runner `self-hosted`" in r.summary, "the [gate.runners.self-hosted] table was used")
    check(statuses(h)[-1]["state"] == "success", "success status")
    head = json.load(open(h.path(".rnx", "run.json")))
    check(head["commit"] == HEAD_SHA and head["pull_request"] == 7 and head["base_branch"] == "main",
          "the PR run is filed under the PR's head commit")

    make_project(h, examples, slow=True)
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA,
                      {"RNX_SERVICE_URL": h.service_url})
    r = h.run_rnx(["gate"], env, expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "the 4x slowdown blocks, got %r:\n%s" % (r.outputs.get("verdict"), r.stdout))
    check("::error title=rnx%3A softmax/eager/float32/b8::" in r.stdout, "error annotation for softmax")
    check(statuses(h)[-1]["state"] == "failure", "failure status")
    # A new comment is POSTed to the PR's thread; an update is a PATCH of that comment by its id.
    comments = [q for q in h.github_requests()
                if (q["method"] == "POST" and "/issues/7/comments" in q["path"]) or
                (q["method"] == "PATCH" and "/issues/comments/" in q["path"])]
    check([q["method"] for q in comments] == ["POST", "PATCH"], "one PR comment, then updated in place: %r" % (
        [q["method"] for q in comments]))


def bench_jobs(h, stdout):
    """The job files rnx gate wrote for its rnx bench children, as the log names them ("running rnx bench --job F")."""
    jobs = []
    for path in re.findall(r"running rnx bench --job (\S+)", stdout):
        with open(path if os.path.isabs(path) else h.path(path), encoding="utf-8") as f:
            jobs.append(json.load(f))
    return jobs


def case_paired(h, examples):
    """Paired mode: `rnx bench --pair` measures the base revision (a git commit) interleaved with the head."""
    base = base_repository(h, examples)
    make_project(h, examples, slow=True)
    git(h, "commit", "-q", "-am", "slow")
    head = git(h, "rev-parse", "HEAD")
    payload = pull_request_payload(head_sha=head, base_sha=base)
    env = h.event_env("pull_request", payload, "refs/pull/7/merge", MERGE_SHA)
    r = h.run_rnx(["gate", "--mode", "paired", "--store", h.path("store.db")], env, expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "paired BLOCK, got %r:\n%s\n%s" % (r.outputs.get("verdict"), r.stdout,
                                                                                   r.stderr))
    jobs = bench_jobs(h, r.stdout)
    check(len(jobs) == 1 and jobs[0]["schema"] == "rnx.bench-job/v1" and jobs[0]["pair_ref"] == base,
          "rnx bench was asked to pair with the PR's base commit: %r" % jobs)
    check(os.path.exists(h.path(".rnx", "base-run.json")), "the base run was written")
    check("mode paired" in r.summary, "the report names paired mode")
    # The real runner measured this machine's peaks and each configuration's work: the summary folds the head's
    # speed of light under the table.
    check("Speed of light: the head against this machine's peaks" in r.summary and "`softmax/eager/float32/b" in
          r.summary.split("Speed of light")[-1], "the report gives the head's speed of light:\n" + r.summary)


def comment_decisions(body):
    """The overall answer and {configuration: decision} of an rnx PR comment (its verdict table)."""
    overall = re.search(r"### rnx: \*\*(\w+)\*\*", body)
    decisions = {}
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if len(cells) == 7 and cells[0].startswith("`"):
            decisions[cells[0].strip("`")] = cells[6].split(":")[0]
    return (overall.group(1) if overall else None), decisions


def page_decisions(html):
    """The overall answer and {configuration: decision} of a run page (its banner and verdict table)."""
    overall = re.search(r'<p class="banner v-(\w+)">', html)
    table = html[html.find('<table class="verdict-table"'):]
    table = table[:table.find("</table>")]
    decisions = {}
    for row in table.split("<tr>")[1:]:
        label = re.search(r"<code>([^<]+)</code>", row)
        chip = re.search(r'<span class="chip d-([\w-]+)">', row)
        if label and chip:
            decisions[label.group(1)] = chip.group(1)
    return (overall.group(1) if overall else None), decisions


def case_paired_service(h, examples):
    """The paired gate against the real rnx-server, as a pull request runs it: the runner measures the base commit
    beside the 4x slower head, the gate stores the base run, the head run and its verdict, and the comment's link
    opens a run page that decides what the comment says; the overview's last verdicts list the paired BLOCK."""
    h.start_service(PROJECT)
    base = base_repository(h, examples)
    make_project(h, examples, slow=True)
    git(h, "commit", "-q", "-am", "slow")
    head = git(h, "rev-parse", "HEAD")
    env = h.event_env("pull_request", pull_request_payload(head_sha=head, base_sha=base), "refs/pull/7/merge",
                      MERGE_SHA, {"RNX_SERVICE_URL": h.service_url})
    r = h.run_rnx(["gate"], env, expect=1)  # paired by default: the base commit is in this checkout
    check("paired mode: the base revision %s" % base in r.stdout, "the gate chose paired mode:\n" + r.stdout)
    check(r.outputs.get("verdict") == "BLOCK", "paired BLOCK, got %r:\n%s\n%s" % (r.outputs.get("verdict"),
                                                                                   r.stdout, r.stderr))
    check("was not stored" not in r.stdout and "not stored" not in r.summary,
          "the paired verdict was stored on the service:\n" + r.stdout)
    head_id = r.outputs.get("run-id", "")
    check(head_id.isdigit(), "the head run was stored: run-id %r" % head_id)

    comments = [q["body"]["body"] for q in h.github_requests()
                if q["method"] in ("POST", "PATCH") and "/comments" in q["path"] and "body" in q.get("body", {})]
    check(comments, "the gate commented on the pull request")
    comment = comments[-1]
    links = re.findall(re.escape(h.service_url) + r"/runs/(\d+)", comment)
    check(links == [head_id] * len(links) and links, "the comment links to the head run's page: %r" % links)
    said, said_decisions = comment_decisions(comment)
    check(said == "BLOCK" and said_decisions.get("softmax/eager/float32/b8") == "slower",
          "the comment says BLOCK, softmax slower: %r %r" % (said, said_decisions))

    status, page = http_get("%s/runs/%s" % (h.service_url, links[0]), h.token)
    check(status == 200, "the linked run page answered %d" % status)
    shown, shown_decisions = page_decisions(page)
    check(shown == said and shown_decisions == said_decisions,
          "the run page decides what the comment says: page %r %r, comment %r %r" % (shown, shown_decisions, said,
                                                                                    said_decisions))
    check("paired comparison" in page, "the run page says the verdict is the gate's paired comparison")
    decided = json.load(open(h.path(".rnx", "verdict.json")))
    base_id = decided["baseline"]["id"]
    check(base_id.isdigit() and base_id != head_id and 'href="/runs/%s"' % base_id in page,
          "the run page names the stored base run %r" % base_id)
    status, body = http_get("%s/api/v1/runs/%s/evidence" % (h.service_url, head_id), h.token)
    stored = json.loads(body)["verdict"]
    check([(c["decision"], c["ratio"], c["ci95"], c["mde"]) for c in stored["configs"]] ==
          [(c["decision"], c["ratio"], c["ci95"], c["mde"]) for c in decided["configs"]],
          "the stored verdict's numbers are the gate's, to the bit")

    status, overview = http_get("%s/projects/%s" % (h.service_url, PROJECT), h.token)
    check(status == 200, "the overview answered %d" % status)
    verdicts = overview[overview.find('<table class="verdicts"'):]
    verdicts = verdicts[:verdicts.find("</table>")]
    rows = [row for row in verdicts.split("<tr>") if 'href="/runs/%s"' % head_id in row]
    check(len(rows) == 1 and "BLOCK" in rows[0] and "paired" in rows[0] and "#7" in rows[0],
          "the overview's last verdicts list the paired BLOCK of #7: %r" % rows)


def case_confirmed(h, examples):
    """Confirmed mode: what the stored baseline calls slower is measured again, paired, at the baseline's commit.
    A baseline recorded 4x faster than its own code (as if measured in a fast spell) is refuted, so identical code
    does not block; a real 4x slowdown is confirmed and blocks."""
    base = base_repository(h, examples)
    store = h.path("store.db")

    # The baseline: the base code measured for real, then every sample divided by 4, stored by a push of `base`.
    push = h.event_env("push", push_payload(after=base), "refs/heads/main", base)
    h.run_rnx(["bench", "--config", "rnx.toml", "--out", h.path("measured.json"), "--quiet"], push, expect=0)
    run = json.load(open(h.path("measured.json")))
    for result in run["results"]:
        result["samples_ms"] = [x / 4 for x in result["samples_ms"]]
    with open(h.path("fast-baseline.json"), "w", encoding="utf-8") as f:
        json.dump(run, f)
    h.run_rnx(["gate", "--results", h.path("fast-baseline.json"), "--store", store], push, expect=0)

    # Identical code in a pull request: stored says slower, the paired re-measurement does not.
    git(h, "commit", "-q", "--allow-empty", "-m", "no code change")
    head = git(h, "rev-parse", "HEAD")
    pr = h.event_env("pull_request", pull_request_payload(head_sha=head, base_sha=base), "refs/pull/7/merge",
                     MERGE_SHA)
    r = h.run_rnx(["gate", "--mode", "confirmed", "--store", store], pr, expect=0)
    jobs = bench_jobs(h, r.stdout)
    check(any(j["pair_ref"] == base and j["kernels"] == ["softmax"] for j in jobs),
          "the slower kernel was measured again, paired at the baseline's commit:\n" + r.stdout)
    check("1 configuration slower against the stored baseline re-measured paired" in r.stdout and
          "0 confirmed" in r.stdout, "the stored slowdown was not confirmed:\n" + r.stdout)
    check(r.outputs.get("verdict") in ("PASS", "WARN"), "identical code does not block, got %r:\n%s" % (
        r.outputs.get("verdict"), r.stdout))
    check("the stored baseline said slower" in r.summary and "mode confirmed" in r.summary,
          "the report keeps what the stored baseline said and names the mode:\n" + r.summary)

    # A real 4x slowdown: stored and paired agree.
    make_project(h, examples, slow=True)
    git(h, "commit", "-q", "-am", "slow")
    head = git(h, "rev-parse", "HEAD")
    pr = h.event_env("pull_request", pull_request_payload(head_sha=head, base_sha=base), "refs/pull/7/merge",
                     MERGE_SHA)
    r = h.run_rnx(["gate", "--mode", "confirmed", "--store", store], pr, expect=1)
    check("1 confirmed" in r.stdout and r.outputs.get("verdict") == "BLOCK",
          "the real slowdown is confirmed and blocks, got %r:\n%s" % (r.outputs.get("verdict"), r.stdout))


BROKEN_KERNEL = """
def run(x):
    raise RuntimeError("the tile size 96 does not divide the row length 1000 of x, so this kernel cannot run; "
                       "fix: set TILE to a divisor of the row length, such as 100 or 125")
"""


def case_outside_git(h, examples):
    """`rnx bench` in a folder that is no git repository: the commit and branch are said to be unknown (the
    document leaves the commit out), a failing kernel's whole message is printed, the table's median is the
    verdict's statistic, --fail-on-error exits 1, and `rnx gate` on the run names the file and --branch."""
    make_project(h, examples, slow=False)
    with open(h.path("kernels", "broken.py"), "w", encoding="utf-8") as f:
        f.write(BROKEN_KERNEL)
    with open(h.path("rnx.toml"), "a", encoding="utf-8") as f:
        f.write('\n[[kernel]]\nname   = "broken"\npath   = "kernels/broken.py"\ninputs = { x = "B,8" }\n')
    check(subprocess.run(["git", "rev-parse", "--git-dir"], cwd=h.dir, capture_output=True).returncode != 0,
          "%s must not be inside a git repository for this case" % h.dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "RNX_", "CI"))}
    r = subprocess.run([h.rnx, "bench", "--out", "run.json", "--processes", "2", "--fail-on-error"], cwd=h.dir,
                       env=env, capture_output=True, text=True, timeout=600)
    check(r.returncode == 1, "--fail-on-error exits 1 on a failing configuration, got %d:\n%s" % (r.returncode,
                                                                                                  r.stderr))
    lines = r.stderr.splitlines()
    for want in (
            "rnx bench: the commit is unknown (%s is not in a git repository, and neither --commit nor GITHUB_SHA is "
            "set), so run.json records none; pass --commit SHA" % os.path.realpath(h.dir),
            "rnx bench: the branch is unknown, so run.json records none; pass --branch NAME (rnx gate needs one to "
            "store the run)",
            "rnx bench: 1 configuration failed (--fail-on-error, exit 1; the run document is written): "
            "broken/eager/float32/b8 error",
            "broken/eager/float32/b8 error:"):
        check(want in lines, "stderr lacks the line %r:\n%s" % (want, r.stderr))
    # The legend names each column once; its wording is the runner's (only what a reader relies on is checked).
    legend = [l for l in lines if l.startswith("median ms: the median of each worker process's samples")]
    check(len(legend) == 1, "stderr lacks the table's legend:\n" + r.stderr)
    for term in ("the statistic the verdict compares", "spread: MAD / median", "GFLOP/s, GB/s:", "SOL:", "sheet:"):
        check(bool(legend) and term in legend[0], "the legend lacks %r:\n%s" % (term, legend[0] if legend else ""))
    # The table's note is cut, and says so; the whole message, with its fix at the end, follows the table.
    row = [l for l in lines if l.startswith("broken/eager/float32/b8") and "(in full below)" in l]
    check(len(row) == 1, "the table row says its note continues below:\n" + r.stderr)
    detail = lines[lines.index("broken/eager/float32/b8 error:") + 1:]
    check(any("fix: set TILE to a divisor of the row length, such as 100 or 125" in l for l in detail),
          "the full message is printed below the table:\n" + r.stderr)
    run = json.load(open(h.path("run.json")))
    check("commit" not in run, "an unknown commit is left out of the document, not written empty: %r" % run.get("commit"))
    softmax = [x for x in run["results"] if x["kernel"] == "softmax"][0]
    medians, at = [], 0
    for g in softmax["groups"]:
        medians.append(statistics.median(softmax["samples_ms"][at:at + g]))
        at += g
    centre = "%.4g" % math.exp(sum(math.log(m) for m in medians) / len(medians))
    row = [l for l in lines if l.startswith("softmax/eager/float32/b8")][-1]
    check(row.split()[2] == centre, "the median column is the geometric mean of process medians %s: %r" % (centre,
                                                                                                          row))

    r = subprocess.run([h.rnx, "gate", "--results", "run.json", "--store", "store.db"], cwd=h.dir, env=env,
                       capture_output=True, text=True, timeout=120)
    want = ("rnx: error: run.json: $.branch is empty and nothing else names the branch measured (no git branch, no "
            "GitHub event): pass --branch NAME\n")
    check(r.returncode == 2 and r.stderr == want, "gate on the prepared run: exit %d, %r" % (r.returncode, r.stderr))
    # Without the flag a failing kernel is a result, not a failed command.
    r = subprocess.run([h.rnx, "bench", "--out", "broken.json", "--kernel", "broken", "--quiet"], cwd=h.dir, env=env,
                       capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "without --fail-on-error the run is written and the exit is 0, got %d" % r.returncode)


CASES = {"stored": case_stored, "paired": case_paired, "paired_service": case_paired_service,
         "confirmed": case_confirmed, "outside_git": case_outside_git}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rnx", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    args = ap.parse_args()
    passed = failed = 0
    for name in args.case or sorted(CASES):
        h = Harness(os.path.abspath(args.rnx), os.path.abspath(args.server), "runner-" + name)
        started = time.time()
        try:
            CASES[name](h, os.path.abspath(args.examples))
            passed += 1
            print("ok   %-10s %5.1fs" % (name, time.time() - started), flush=True)
        except Exception:  # noqa: BLE001 - report and go on
            failed += 1
            print("FAIL %-10s (folder %s)" % (name, h.dir), flush=True)
            traceback.print_exc()
        finally:
            h.close()
            if not failed:
                shutil.rmtree(h.dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
