#!/usr/bin/env python3
"""Why it got slower, end to end on the CPU: the demo's slowed pull request (scripts/demo.sh: softmax swapped for the
hand-written four-pass version, layernorm untouched) gated paired against the real rnx-server, reported to the fake
GitHub API. The slower configuration's base and head are profiled once more in rnx-profile-worker, and the
explanation names the extra operators with their share of the added time: in the PR comment, the step summary,
verdict.json and on the run page the comment links to. The untouched layernorm is explained only where it is not
equivalent; `rnx explain BASE.json HEAD.json` and `rnx compare --explain` say the same from the run files; an explain
budget of 0 profiles nothing and says so.

  explain_e2e.py --rnx build/bin/rnx --server build/bin/rnx-server --examples examples
"""
import argparse
import json
import os
import re
import shutil
import sys
import time
import traceback

import jsonschema

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import MERGE_SHA, Failure, Harness, check, http_get, pull_request_payload  # noqa: E402
from e2e_runner import comment_decisions, git, page_decisions  # noqa: E402

PROJECT = "rnx-explain"
SOFTMAX = "softmax/eager/float32/b8"
# The four-pass softmax's operators that torch.softmax does not call.
EXTRA_OPERATORS = ("aten::max", "aten::sub", "aten::exp", "aten::sum", "aten::div")
MANIFEST = """[project]
name = "@PROJECT@"

[defaults]
runtimes = ["eager"]
dtypes   = ["float32"]
batch    = [8]
device   = "cpu"

[bench]
processes     = 3
max_processes = 6
samples       = 40
min_samples   = 8
budget_ms     = 100
warmup_ms     = 30
threads       = 1

[[kernel]]
name   = "softmax"
path   = "kernels/softmax.py"
inputs = { x = "B,64,1024" }

[[kernel]]
name   = "layernorm"
path   = "kernels/layernorm.py"
inputs = { x = "B,64,1024" }
tolerance = { float32 = { rtol = 1e-5, atol = 1e-5 } }

[gate]
rope        = 0.02
probability = 0.95
@EXTRA@
# Two short benchmark runs on a shared two-core machine differ by more than 2%.
[gate.runners.self-hosted]
rope        = 0.30
probability = 0.90
""".replace("@PROJECT@", PROJECT)


def write_project(h, examples, softmax_file, extra=""):
    os.makedirs(h.path("kernels"), exist_ok=True)
    shutil.copy(os.path.join(examples, "kernels", softmax_file), h.path("kernels", "softmax.py"))
    shutil.copy(os.path.join(examples, "kernels", "layernorm_fused.py"), h.path("kernels", "layernorm.py"))
    with open(h.path("rnx.toml"), "w", encoding="utf-8") as f:
        f.write(MANIFEST.replace("@EXTRA@", extra))


def demo_repository(h, examples, extra=""):
    """main has the fused kernels; the pull request's commit swaps softmax for four passes. Returns (base, head)."""
    write_project(h, examples, "softmax_fused.py", extra)
    git(h, "init", "-q", "-b", "main")
    with open(h.path(".gitignore"), "w") as f:
        f.write(".rnx/\n*.db\n*.json\n*.jsonl\n*.md\n*.txt\n*.port\n")
    git(h, "add", "rnx.toml", "kernels", ".gitignore")
    git(h, "commit", "-q", "-m", "fused kernels")
    base = git(h, "rev-parse", "HEAD")
    write_project(h, examples, "softmax.py", extra)
    git(h, "commit", "-q", "-am", "hand-written softmax")
    return base, git(h, "rev-parse", "HEAD")


def details_block(markdown, config):
    """The folded explanation of `config` in a Markdown report: from its <details> to its </details>."""
    start = markdown.find("<details><summary>Why slower: %s" % config)
    check(start >= 0, "the report folds an explanation of %s:\n%s" % (config, markdown))
    return markdown[start:markdown.find("</details>", start)]


def check_named(block, where):
    """At least four of the five extra operators in the top five lines (the fifth line may be the removed
    aten::_softmax), each with its share of the added time."""
    lines = [l for l in block.splitlines() if re.match(r"\d\. ", l)]
    check(len(lines) == 5, "%s: the top five lines: %r" % (where, lines))
    named = [op for op in EXTRA_OPERATORS if any(l[3:].startswith(op + " added") and "of the added time" in l
                                                 for l in lines)]
    check(len(named) >= 4, "%s names the extra operators with their share of the added time: %r" % (where, lines))


def case_pull_request(h, examples):
    h.start_service(PROJECT)
    h.start_github({})
    base, head = demo_repository(h, examples)
    env = h.event_env("pull_request", pull_request_payload(head_sha=head, base_sha=base), "refs/pull/7/merge",
                      MERGE_SHA, {"RNX_SERVICE_URL": h.service_url})
    r = h.run_rnx(["gate"], env, expect=1)
    check("paired mode: the base revision %s" % base in r.stdout, "the gate chose paired mode:\n" + r.stdout)
    check(re.search(r"rnx explain: %s explained in [0-9.]+ s" % re.escape(SOFTMAX), r.stderr),
          "the gate says what explaining cost:\n" + r.stderr)

    decided = json.load(open(h.path(".rnx", "verdict.json")))
    schema_path = os.path.join(examples, os.pardir, "docs", "schema", "verdict.schema.json")
    jsonschema.validate(decided, json.load(open(schema_path)))  # the explanation as docs/schema describes it
    by_config = {"%s/%s/%s/b%d" % (c["kernel"], c["runtime"], c["dtype"], c["batch"]): c for c in decided["configs"]}
    softmax = by_config[SOFTMAX]
    check(softmax["decision"] == "slower", "the four-pass softmax is slower: %r" % softmax)
    e = softmax.get("explanation")
    check(e and e["status"] == "explained" and e["cost_s"] > 0, "verdict.json explains it: %r" % e)
    calls = [c for c in e["counts"] if c["kind"] == "operator_calls"]
    check(calls and calls[0]["head"] > calls[0]["base"], "more operator calls a call, exactly: %r" % e["counts"])
    added = {c["name"] for c in e["changes"] if c["kind"] == "added"}
    check(set(EXTRA_OPERATORS) <= added, "every extra operator is an added row: %r" % sorted(added))
    check(abs(sum(c["share"] for c in e["changes"] if c["share"] > 0) - 1) < 1e-6, "shares of the added time sum to 1")
    layernorm = by_config["layernorm/eager/float32/b8"]
    check(layernorm["decision"] in ("equivalent", "abstain", "faster") and
          ("explanation" in layernorm) == (layernorm["decision"] == "abstain"),
          "layernorm is explained only where it abstains (not when equivalent): %r" % layernorm)

    comments = [q["body"]["body"] for q in h.github_requests()
                if q["method"] in ("POST", "PATCH") and "/comments" in q["path"] and "body" in q.get("body", {})]
    check(comments, "the gate commented on the pull request")
    said, decisions = comment_decisions(comments[-1])
    check(said == "BLOCK" and decisions.get(SOFTMAX) == "slower", "the comment says BLOCK: %r %r" % (said, decisions))
    check_named(details_block(comments[-1], SOFTMAX), "the PR comment")
    check_named(details_block(r.summary, SOFTMAX), "the step summary")

    links = re.findall(re.escape(h.service_url) + r"/runs/(\d+)", comments[-1])
    check(links, "the comment links to the run page")
    status, page = http_get("%s/runs/%s" % (h.service_url, links[0]), h.token)
    check(status == 200, "the run page answered %d" % status)
    shown, shown_decisions = page_decisions(page)
    check(shown == said and shown_decisions == decisions, "the run page decides what the comment says")
    section = page[page.find("<h2>Why the time moved</h2>"):]
    check(section.startswith("<h2>"), "the run page has the explanation section")
    for op in EXTRA_OPERATORS:
        check("<td><code>%s</code></td><td>added</td>" % op in section, "the run page's table names %s" % op)
    check("of the added time" in section and "operator calls" in section, "shares and counts on the run page")

    # The same from the run files: rnx explain (every configuration) and rnx compare --explain (the slower one).
    r = h.run_rnx(["explain", ".rnx/base-run.json", ".rnx/run.json", "--format", "markdown"], env, expect=0)
    check_named(details_block(r.stdout, SOFTMAX), "rnx explain's Markdown")
    check("layernorm/eager/float32/b8 (explained)" in r.stdout, "rnx explain explains every configuration asked")
    r = h.run_rnx(["compare", ".rnx/base-run.json", ".rnx/run.json", "--explain"], env, expect=1)
    check("Why slower: %s (explained)" % SOFTMAX in r.stdout and "count: operator calls" in r.stdout,
          "rnx compare --explain:\n" + r.stdout)


def case_budget(h, examples):
    """explain_budget_s = 0: nothing is profiled, and the report says why there is no explanation."""
    h.start_github({})
    base, head = demo_repository(h, examples, extra="explain_budget_s = 0\n")
    env = h.event_env("pull_request", pull_request_payload(head_sha=head, base_sha=base), "refs/pull/7/merge",
                      MERGE_SHA)
    r = h.run_rnx(["gate", "--store", h.path("store.db")], env, expect=1)
    decided = json.load(open(h.path(".rnx", "verdict.json")))
    softmax = [c for c in decided["configs"] if c["kernel"] == "softmax"][0]
    e = softmax.get("explanation") or {}
    check(e.get("status") == "over-budget" and "explain_budget_s" in e.get("note", ""),
          "the budget bounds the profiling: %r" % e)
    check("Why slower: %s (over-budget)" % SOFTMAX in r.summary, "the summary says it was not explained")
    r = h.run_rnx(["gate", "--store", h.path("store.db"), "--explain", "off"], env, expect=1)
    check("explanation" not in json.dumps(json.load(open(h.path(".rnx", "verdict.json")))),
          "--explain off explains nothing")
    r = h.run_rnx(["gate", "--store", h.path("store.db"), "--explain", "sometimes"], env, expect=2)
    check("--explain sometimes: not a scope" in r.stderr + r.stdout, "a bad scope is a usage error:\n" + r.stderr)


CASES = {"pull_request": case_pull_request, "budget": case_budget}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rnx", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--case", action="append", choices=sorted(CASES))
    args = ap.parse_args()
    passed = failed = 0
    for name in args.case or sorted(CASES):
        h = Harness(os.path.abspath(args.rnx), os.path.abspath(args.server), "explain-" + name)
        started = time.time()
        try:
            CASES[name](h, os.path.abspath(args.examples))
            passed += 1
            print("ok   %-12s %5.1fs" % (name, time.time() - started), flush=True)
        except Exception:  # noqa: BLE001 - report and go on
            failed += 1
            print("FAIL %-12s (folder %s)" % (name, h.dir), flush=True)
            traceback.print_exc()
        finally:
            h.close()
            if not failed:
                shutil.rmtree(h.dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
