#!/usr/bin/env python3
"""End-to-end tests of `rnx gate` / `rnx accept` run as GitHub Actions would run them.

Each case gets its own temp folder, the real rnx-server on a loopback port with a temp SQLite db, and
the fake GitHub REST API (fake_github.py) that records every request. These cases use prepared run
documents (`--results`), because their point is the gate's logic; e2e_runner.py covers the real runner.

  e2e_gate.py --rnx build/bin/rnx --server build/bin/rnx-server --case block_on_slowdown
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
from harness import (BASE_SHA, GITHUB_TOKEN, HEAD_SHA, MERGE_SHA, REPO, Failure, Harness, check,  # noqa: E402
                     free_port, http_get, issue_comment_payload, pull_request_payload, push_payload,
                     synthetic_run)

PROJECT = "kernels-demo"
ENV_ID = synthetic_run(PROJECT)["environment"]["env_id"]  # the synthetic runs' environment, hashed as rnx does
HERE = os.path.dirname(os.path.abspath(__file__))


# --- helpers ---------------------------------------------------------------------------------------
def push_gate(h, run_path, extra_args=(), sha=BASE_SHA, expect=0):
    env = h.event_env("push", push_payload(after=sha), "refs/heads/main", sha)
    return h.run_rnx(["gate", "--results", run_path, *extra_args], env, expect=expect)


def pr_gate(h, run_path, extra_args=(), number=7, expect=None, env_extra=None):
    env = h.event_env("pull_request", pull_request_payload(number=number), "refs/pull/%d/merge" % number, MERGE_SHA,
                      env_extra)
    return h.run_rnx(["gate", "--results", run_path, *extra_args], env, expect=expect)


def run_file(h, name, **kw):
    return h.write_json(name, synthetic_run(PROJECT, **kw))


def rnx_comments(h, number=7):
    comments = []
    page = 1
    while True:
        chunk = h.github_get("/repos/%s/issues/%d/comments?per_page=100&page=%d" % (REPO, number, page))
        comments += chunk
        if len(chunk) < 100:
            return [c for c in comments if "<!-- rnx-gate" in c["body"]]
        page += 1


def requests_matching(h, method, fragment):
    return [r for r in h.github_requests() if r["method"] == method and fragment in r["path"]]


def statuses(h, sha=HEAD_SHA):
    return [r["body"] for r in requests_matching(h, "POST", "/statuses/" + sha)]


def assert_headers(h):
    for r in h.github_requests():
        if r["path"].startswith("/repos/"):
            check(r["headers"].get("authorization") == "Bearer " + GITHUB_TOKEN, "request without the token: %r" % r)
            check(r["headers"].get("accept") == "application/vnd.github+json", "request without GitHub's media type")
            check(r["headers"].get("x-github-api-version") == "2022-11-28", "request without the API version")
            check(r["status"] < 400, "GitHub answered %d to %s %s" % (r["status"], r["method"], r["path"]))


def assert_in(needle, text, what):
    check(needle in text, "%s does not contain %r:\n%s" % (what, needle, text))


# --- cases -----------------------------------------------------------------------------------------
def case_pass_and_comment_in_place(h):
    """Baseline on push, PASS on identical code, the PR comment found again (page 2) and updated in place."""
    h.start_service(PROJECT)
    # 120 earlier comments put the gate's comment on the second page: the search must follow Link.
    h.start_github({"comments": [{"issue": 7, "body": "review note %d" % i, "user": "reviewer"} for i in range(120)]})
    r = push_gate(h, run_file(h, "base.json", seed=1))
    check(r.outputs.get("verdict") == "PASS", "the first baseline has nothing to compare with: PASS with its note")
    assert_in("first baseline: nothing to compare", r.outputs.get("reason", ""), "push reason")
    assert_in("first baseline of main", r.outputs.get("reason", ""), "push reason")
    assert_in("### rnx: **PASS**", r.summary, "the first baseline's step summary")
    check(r.outputs.get("run-id"), "push outputs a run id")

    r = pr_gate(h, run_file(h, "head1.json", seed=2), expect=0)
    check(r.outputs.get("verdict") == "PASS", "identical code passes, got %r: %s" % (r.outputs.get("verdict"), r.stdout))
    for needle in ("| Configuration |", "matmul/eager/float32/b8", "equivalent", "P(slower)", "Ratio [95% CI]"):
        assert_in(needle, r.summary, "step summary")
    assert_in("### rnx: **PASS**", r.outputs.get("report", ""), "report output")
    check(os.path.exists(h.path(".rnx", "verdict.json")), "verdict.json written")
    # report.html beside verdict.json: the run's evidence, self-contained.
    html_path = h.path(r.outputs.get("report-html", ""))
    check(html_path.endswith("report.html") and os.path.exists(html_path), "report-html output names report.html")
    html = open(html_path).read()
    for needle in ("Chart.js v3", 'id="run-%s"' % r.outputs.get("run-id"), "matmul/eager/float32/b8", "PASS"):
        assert_in(needle, html, "report.html")
    check('src="/' not in html and 'href="http' not in html, "report.html loads nothing from elsewhere")
    posts = requests_matching(h, "POST", "/issues/7/comments")
    check(len(posts) == 1, "one comment created, got %d" % len(posts))
    check(statuses(h) and statuses(h)[-1]["state"] == "success", "status success on the head commit")
    check(statuses(h)[-1]["context"] == "rnx/benchmark", "status context rnx/benchmark")
    check(statuses(h)[-1]["description"].startswith("PASS"), "status says PASS")
    check(statuses(h)[-1]["target_url"].startswith("https://github.com/%s/actions/runs/" % REPO), "links the run")
    first_id = rnx_comments(h)[0]["id"]

    r = pr_gate(h, run_file(h, "head2.json", seed=3), expect=0)
    check(len(requests_matching(h, "POST", "/issues/7/comments")) == 1, "no second comment was created")
    patches = requests_matching(h, "PATCH", "/issues/comments/%d" % first_id)
    check(len(patches) == 1, "the comment was updated in place")
    mine = rnx_comments(h)
    check(len(mine) == 1 and mine[0]["id"] == first_id, "exactly one rnx comment in the thread")
    check(any(r["query"].get("page") == ["2"] for r in requests_matching(h, "GET", "/issues/7/comments")),
          "the comment search followed the Link header to page 2")
    assert_headers(h)


def case_block_on_slowdown(h):
    """An injected 30% slowdown is BLOCK: exit 1, failure status, error annotations, evidence table."""
    h.start_service(PROJECT)
    h.start_github({})
    push_gate(h, run_file(h, "base.json", seed=1))
    r = pr_gate(h, run_file(h, "slow.json", seed=2, scale=1.3), expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "verdict output BLOCK")
    assert_in("::error title=rnx%3A matmul/eager/float32/b8::", r.stdout, "annotations")
    assert_in("is slower: head/base 1.3", r.stdout, "annotation evidence")
    assert_in("slower", r.summary, "summary")
    assert_in("/rnx accept", r.summary, "the summary says how to accept an intended slowdown")
    check(statuses(h)[-1]["state"] == "failure", "failure status")
    check(len(statuses(h)[-1]["description"]) <= 140, "status description within GitHub's limit")
    verdict = json.load(open(h.path(".rnx", "verdict.json")))
    check(verdict["verdict"] == "BLOCK" and all(c["decision"] == "slower" for c in verdict["configs"]),
          "every configuration is slower")
    # The slowdown merged anyway: the push stores it as the new baseline and reports the regression
    # against the previous baseline, without failing the (already landed) push build.
    r = push_gate(h, run_file(h, "merged.json", seed=4, scale=1.3), sha=HEAD_SHA, expect=0)
    check(r.outputs.get("verdict") == "BLOCK", "the push reports the regression")
    assert_in("newest baseline of main; against the previous one", r.outputs.get("reason", ""), "push reason")
    # Two baselines of main now: the summary draws each configuration's statistic over the base branch's baselines
    # only (the pull request's runs between them are not), its newest point the number the table shows for it.
    assert_in("Recent history (the base branch's baselines, oldest to newest", r.summary, "sparkline section")
    spark = [line for line in r.summary.splitlines() if line.startswith("matmul/eager/float32/b8 ")]
    check(len(spark) == 1, "a sparkline per configuration: %r" % spark)
    drawn, last = spark[0].split()[1], spark[0].split()[2]
    check(len(drawn) == 2, "two baselines drawn, no pull request run: %r" % spark[0])
    row = [line for line in r.summary.splitlines() if line.startswith("| `matmul/eager/float32/b8` |")]
    check(row and row[0].split("|")[3].strip() == last,
          "the newest point is the table's head number: %r against %r" % (spark[0], row))
    assert_in("::error title=rnx%3A softmax/eager/float32/b8::", r.stdout, "regression annotations on push")
    check(not requests_matching(h, "POST", "/issues/0/"), "a push comments on no pull request")
    assert_headers(h)


def _plain(markdown_line):
    """A Markdown line as it reads: escapes and the zero-width joiners that keep URLs from linking removed."""
    return re.sub(r"\\(.)", r"\1", markdown_line).replace("\u200d", "")


def _no_verdict(h, r, lead, level="warning"):
    """The one rule for a service that cannot be used: the step summary's first line and the PR comment (after its
    marker) lead with LEAD ("no verdict: why; the service URL ... (from ...); fix: ..."), one annotation of LEVEL
    carries it, stderr says it, the verdict is WARN with it as the reason."""
    first = _plain(r.summary.splitlines()[0])
    check(first == "**no verdict**: " + lead[len("no verdict: "):], "summary's first line %r, expected %r" % (first, lead))
    comment = rnx_comments(h)[-1]["body"].splitlines()
    check(_plain(comment[1]) == first, "the PR comment leads with %r, not %r" % (first, comment[1]))
    check(r.outputs.get("verdict") == "WARN", "no verdict is WARN, got %r" % r.outputs.get("verdict"))
    check(r.outputs.get("reason") == lead, "reason %r, expected %r" % (r.outputs.get("reason"), lead))
    want = "::%s title=rnx%%3A no verdict::%s\n" % (level, lead.replace("%", "%25"))
    assert_in(want, r.stdout, "the annotation")
    check(r.stdout.count("title=rnx WARN::") == 0, "one annotation for the lead, not a second for WARN")
    check(r.stderr == "rnx gate: %s: %s\n" % ("error" if level == "error" else "warning", lead),
          "stderr %r" % r.stderr)


def _service_outage(h, url, extra=()):
    h.start_github({})
    started = time.time()
    r = pr_gate(h, run_file(h, "head.json", seed=2), extra_args=["--service-url", url, *extra], expect=0)
    check(r.outputs.get("verdict") == "WARN", "an unreachable service is WARN, got %r" % r.outputs.get("verdict"))
    check(r.outputs.get("reason", "").startswith("no verdict: "), "reason %r" % r.outputs.get("reason"))
    assert_in("::warning title=rnx%3A no verdict::", r.stdout, "warning annotation")
    check(statuses(h)[-1]["state"] == "success", "WARN does not fail the commit status")
    check(statuses(h)[-1]["description"].startswith("WARN"), "status says WARN")
    check(len(requests_matching(h, "POST", "/issues/7/comments")) == 1, "the PR still gets its comment")
    return time.time() - started


def case_warn_service_down(h):
    """Nothing listens at the service URL: WARN with the reason, exit 0."""
    _service_outage(h, "http://127.0.0.1:%d" % free_port())


def case_warn_service_500(h):
    url = h.start_python_server([os.path.join(HERE, "failing_service.py"), "--mode", "500"], "failing")
    _service_outage(h, url)


def case_warn_service_timeout(h):
    url = h.start_python_server([os.path.join(HERE, "failing_service.py"), "--mode", "hang", "--hang-seconds", "20"],
                                "hanging")
    took = _service_outage(h, url, ["--service-timeout", "1"])
    check(took < 15, "the gate gave up on a hung service after its timeout (took %.1fs)" % took)


REACH_FIX = "fix: set --service-url to the address of a running rnx-server, or start it there"


def _wrong_service_url(h, url, why, fix=REACH_FIX):
    """A pull request's `rnx gate --service-url URL` with a URL that cannot work: no verdict, said first in the step
    summary and the PR comment with the cause, the URL and where it came from and the fix; a warning annotation;
    exit 0; at once rather than after the 30 s timeout. With --on-service-error fail: the same words as an error
    annotation, the commit status "error", exit 2."""
    h.start_github({})
    lead = "no verdict: %s; the service URL %s (from --service-url); %s" % (why, url, fix)
    started = time.time()
    r = pr_gate(h, run_file(h, "head.json", seed=2), ["--service-url", url, "--service-timeout", "30"], expect=0)
    check(time.time() - started < 10, "the gate took %.1fs on a wrong URL" % (time.time() - started))
    _no_verdict(h, r, lead)
    check(statuses(h)[-1]["state"] == "success", "a warning does not fail the commit status")
    r = pr_gate(h, run_file(h, "head.json", seed=2), ["--service-url", url, "--on-service-error", "fail"], expect=2)
    _no_verdict(h, r, lead, "error")
    check(statuses(h)[-1]["state"] == "error", "on_service_error fail: the commit status is error")
    assert_in("rnx gate: exit 2:", r.stdout, "the terminal says why exit 2")


def case_wrong_url_refused(h):
    port = free_port()
    _wrong_service_url(h, "http://127.0.0.1:%d" % port,
                       "cannot reach the service: connection refused: nothing listens on 127.0.0.1:%d" % port)


def case_wrong_url_unresolvable(h):
    # Under the reserved .invalid domain (RFC 6761), which never resolves and needs no network to say so.
    _wrong_service_url(h, "http://rnx-no-such-host.invalid:8722", "cannot reach the service: the host name "
                       "rnx-no-such-host.invalid does not resolve (is it spelled right?)")


def case_wrong_url_https_to_http(h):
    h.start_service(PROJECT)
    where = h.service_url[len("http://"):]
    _wrong_service_url(h, "https://" + where, "cannot reach the service: the server at %s speaks HTTP, not HTTPS "
                       "(its answer to the TLS handshake was not TLS): write the URL with http://" % where)


def case_wrong_url_path(h):
    """A URL with a path the server does not have (the API's, say): its health check answers 404."""
    h.start_service(PROJECT)
    url = h.service_url + "/api/v1"
    status, body = http_get(url + "/healthz", h.token)
    check(status == 404, "the wrong path answers 404, got %d" % status)
    message = json.loads(body)["error"]["message"]
    _wrong_service_url(h, url, "the service failed its health check: GET %s/healthz answered 404: %s" % (url, message),
                       "fix: set --service-url to the server's root URL %s (no path)" % h.service_url)


def case_base_results_implies_paired(h):
    """--results with --base-results and no --mode: the paired comparison against that base run (not the stored
    baseline); beside --mode stored it is refused with the fix."""
    h.start_service(PROJECT)
    h.start_github({})
    push_gate(h, run_file(h, "stored-base.json", seed=5, commit=BASE_SHA), ["--service-url", h.service_url])
    base = run_file(h, "pair-base.json", seed=1, commit=BASE_SHA)
    head = run_file(h, "pair-head.json", seed=2, scale=1.3)
    r = pr_gate(h, head, ["--base-results", base, "--service-url", h.service_url], expect=1)
    assert_in("rnx gate: paired mode: the head is judged against the base run %s (--base-results)" % base, r.stdout,
              "the terminal")
    check(r.outputs.get("verdict") == "BLOCK", "paired BLOCK on the slowdown")
    assert_in("mode paired", r.summary, "the report names the mode")
    decided = json.load(open(h.path(".rnx", "verdict.json")))
    stored_base = [c for c in decided["configs"]]
    check(decided["baseline"]["commit"] == BASE_SHA and decided["baseline"]["id"].isdigit(),
          "judged against the stored base run of --base-results: %r" % decided["baseline"])
    check(stored_base and all(c["decision"] == "slower" for c in stored_base), "every configuration slower")
    r = pr_gate(h, head, ["--base-results", base, "--mode", "stored", "--service-url", h.service_url], expect=2)
    assert_in("--base-results %s is the base run of the paired comparison, which --mode stored does not make: use "
              "--mode paired, or drop --base-results" % base, r.stderr, "the refusal")


def case_warn_no_baseline(h):
    h.start_service(PROJECT)
    h.start_github({})
    r = pr_gate(h, run_file(h, "head.json", seed=2), ["--service-url", h.service_url], expect=0)
    check(r.outputs.get("verdict") == "WARN", "no baseline is WARN")
    # The advice names the service's way to make a baseline by hand, for this very run.
    want = ('no baseline of branch "main" in environment %s yet: upload a run from "main" measured in '
            'this environment (a push build), or make run %s the baseline with POST /api/v1/baselines'
            % (ENV_ID, r.outputs.get("run-id")))
    check(r.outputs.get("reason") == want, "reason %r, expected %r" % (r.outputs.get("reason"), want))
    # The stored run's page on the service is on the terminal, not only in report.md.
    assert_in("rnx gate: the run's page: %s/runs/%s\n" % (h.service_url, r.outputs.get("run-id")), r.stdout,
              "the terminal")
    assert_in("new", r.summary, "configurations are new")
    # The head column is the statistic a verdict compares (per process, then the geometric mean), and says so.
    verdict = json.load(open(h.path(".rnx", "verdict.json")))
    run = json.load(open(h.path("head.json")))
    for c, res in zip(verdict["configs"], run["results"]):
        medians = [statistics.median(res["samples_ms"][i * 12:(i + 1) * 12]) for i in range(3)]
        want_ms = math.exp(sum(math.log(m) for m in medians) / 3)
        check(abs(c["head_ms"] - want_ms) < 1e-9 * want_ms, "head_ms %r is not the geometric mean of process "
              "medians %r" % (c["head_ms"], want_ms))


def case_accept_flow(h):
    """BLOCK; `/rnx accept` by a reader is refused; by a maintainer accepted (reply, reaction, status);
    the PR's next run PASSes against the accepted baseline."""
    h.start_service(PROJECT)
    h.start_github({
        "permissions": {"maintainer": "maintain", "reader": "read"},
        "pulls": {"7": {"head_ref": "faster-softmax", "head_sha": HEAD_SHA, "base_ref": "main", "base_sha": BASE_SHA}},
        "comments": [{"id": 501, "issue": 7, "body": "/rnx accept", "user": "reader"},
                     {"id": 502, "issue": 7, "body": "/rnx accept bigger tiles trade latency for H200 throughput",
                      "user": "maintainer"},
                     {"id": 503, "issue": 7, "body": "looks good", "user": "maintainer"}],
    })
    # The comment workflow checks out the repository: the project and [service] url come from rnx.toml.
    h.write_manifest(PROJECT, service_url=h.service_url)
    push_gate(h, run_file(h, "base.json", seed=1))
    r = pr_gate(h, run_file(h, "slow1.json", seed=2, scale=1.3), expect=1)
    # With a service the summary and the comment link the run's page there, and report.html is its evidence.
    run_url = "%s/runs/%s" % (h.service_url, r.outputs.get("run-id"))
    assert_in(run_url, r.summary, "the summary links the run page")
    assert_in(run_url, [q["body"]["body"] for q in requests_matching(h, "POST", "/issues/7/comments")][-1],
              "the PR comment links the run page")
    html = open(h.path(r.outputs.get("report-html", ""))).read()
    check('id="run-%s"' % r.outputs.get("run-id") in html and "slower" in html, "report.html from the service")

    def comment_event(comment_id, body, login):
        return h.event_env("issue_comment", issue_comment_payload(7, body, login, comment_id), "refs/heads/main",
                           BASE_SHA)

    r = h.run_rnx(["gate"], comment_event(503, "looks good", "maintainer"), expect=0)
    assert_in("nothing to do", r.stdout, "an ordinary comment")

    r = h.run_rnx(["gate"], comment_event(501, "/rnx accept", "reader"), expect=1)
    check(requests_matching(h, "GET", "/collaborators/reader/permission"), "the reader's permission was checked")
    replies = [q["body"]["body"] for q in requests_matching(h, "POST", "/issues/7/comments")]
    check(any("needs write permission" in b for b in replies), "the refusal was replied in the thread")
    check(any(q["body"]["content"] == "-1" for q in requests_matching(h, "POST", "/issues/comments/501/reactions")),
          "the refused command got a -1 reaction")
    check(r.outputs.get("accepted") == "false", "accepted=false output")

    r = h.run_rnx(["accept"], comment_event(502, "/rnx accept bigger tiles", "maintainer"), expect=0)
    check(requests_matching(h, "GET", "/collaborators/maintainer/permission"), "the maintainer's permission checked")
    check(requests_matching(h, "GET", "/pulls/7"), "the PR's head commit was looked up")
    replies = [q["body"]["body"] for q in requests_matching(h, "POST", "/issues/7/comments")]
    check(any(b.startswith("Accepted by @maintainer") and "baseline of `main`" in b for b in replies),
          "the acceptance was replied in the thread: %r" % replies)
    check(any(q["body"]["content"] == "+1" for q in requests_matching(h, "POST", "/issues/comments/502/reactions")),
          "the command got a +1 reaction")
    check(statuses(h)[-1]["state"] == "success" and "accepted" in statuses(h)[-1]["description"],
          "the head commit's status says accepted")
    check(r.outputs.get("accepted") == "true" and r.outputs.get("run-id"), "accepted=true and the run id")

    r = pr_gate(h, run_file(h, "slow2.json", seed=3, scale=1.3), expect=0)
    check(r.outputs.get("verdict") == "PASS", "the PR passes against the accepted baseline, got %r: %s" % (
        r.outputs.get("verdict"), r.stdout))
    assert_headers(h)


def case_report_only(h):
    """--report-only turns BLOCK into WARN: exit 0, warnings instead of errors, success status."""
    h.start_service(PROJECT)
    h.start_github({})
    push_gate(h, run_file(h, "base.json", seed=1))
    r = pr_gate(h, run_file(h, "slow.json", seed=2, scale=1.3), extra_args=["--report-only"], expect=0)
    check(r.outputs.get("verdict") == "WARN", "report-only answers WARN")
    assert_in("::warning title=rnx%3A matmul/eager/float32/b8::", r.stdout, "warning annotations")
    check("::error" not in r.stdout, "no error annotations in report-only mode")
    check(statuses(h)[-1]["state"] == "success", "success status")
    assert_in("slower", r.summary, "the evidence is still reported")


def case_embedded_store(h):
    """No service configured: the embedded SQLite store holds baselines across invocations, and every piece of
    advice names the embedded store's command, not the service's API or a comment flow it cannot reach."""
    h.start_github({
        "permissions": {"maintainer": "maintain"},
        "pulls": {"7": {"head_ref": "faster-softmax", "head_sha": HEAD_SHA, "base_ref": "main", "base_sha": BASE_SHA}},
        "comments": [{"id": 601, "issue": 7, "body": "/rnx accept intended", "user": "maintainer"}],
    })
    store = h.path("cache", "baselines.db")
    r = pr_gate(h, run_file(h, "early.json", seed=5), ["--store", store], expect=0)
    want = ('no baseline of branch "main" in environment %s yet: upload a run from "main" measured in '
            'this environment (a push build), or make run 1 the baseline with rnx accept --run-id 1 --store %s '
            '--reason "..."' % (ENV_ID, store))
    check(r.outputs.get("reason") == want, "reason %r, expected %r" % (r.outputs.get("reason"), want))
    push_gate(h, run_file(h, "base.json", seed=1), ["--store", store])
    check(os.path.exists(store), "the store file was created")
    r = pr_gate(h, run_file(h, "same.json", seed=2), ["--store", store], expect=0)
    check(r.outputs.get("verdict") == "PASS", "PASS against the embedded baseline")
    assert_in("embedded store", r.summary, "the report names the store")
    r = pr_gate(h, run_file(h, "slow.json", seed=3, scale=1.3), ["--store", store], expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "BLOCK against the embedded baseline")
    # With the embedded store report.html holds the project's overview, histories and the run's evidence; and
    # `rnx report` writes the same from the store afterwards.
    html = open(h.path(r.outputs.get("report-html", ""))).read()
    for needle in ('id="overview"', 'id="run-%s"' % r.outputs.get("run-id"), 'data-kind="history"', "slower"):
        assert_in(needle, html, "report.html from the embedded store")
    out = h.path("report-again.html")
    h.run_rnx(["report", "--store", store, "--project", PROJECT, "--run-id", r.outputs.get("run-id"), "-o", out], {},
              expect=0)
    check('id="run-%s"' % r.outputs.get("run-id") in open(out).read(), "rnx report writes the run's page")
    bad = h.run_rnx(["report", "--store", store, "--project", "no-such-project", "-o", out], {}, expect=2)
    assert_in("project \"no-such-project\" is not in", bad.stderr, "rnx report names the missing project")
    assert_in("> If this slowdown is intended: this run is in the embedded store of this job's cache, which a "
              "`/rnx accept` comment cannot reach (that needs the service, `[service] url`). Merged anyway, the push "
              "build stores the merged code as the new baseline.\n", r.summary, "the accept advice")
    check("someone with write access can comment" not in r.summary, "no comment flow offered on the embedded store")
    # The comment's workflow restores main's store, which lacks the pull request's run: it says why, not "wait".
    h.write_manifest(PROJECT)
    env = h.event_env("issue_comment", issue_comment_payload(7, "/rnx accept intended", "maintainer", 601),
                      "refs/heads/main", BASE_SHA)
    main_store = h.path("main-cache", "baselines.db")
    r = h.run_rnx(["gate", "--store", main_store], env, expect=2)
    assert_in("rnx: error: no run of pull request #7 at its head commit `%s` is stored in the embedded store %s; "
              "the gate job of a pull request keeps its run in its own cached embedded store, which this comment's "
              "workflow cannot reach, so `/rnx accept` needs the service: set [service] url in rnx.toml (or the "
              "service-url input) in both workflows\n" % (HEAD_SHA[:12], main_store), r.stderr, "comment on the "
              "embedded store")
    # The default path, .rnx/baselines.db in the working folder, when neither flag is given.
    r = push_gate(h, run_file(h, "base2.json", seed=4))
    check(os.path.exists(h.path(".rnx", "baselines.db")), "the default store is .rnx/baselines.db")


def case_paired_mode(h):
    """Paired mode judges head against the base revision measured in the same job; a down service only
    loses the history upload."""
    h.start_github({})
    base = run_file(h, "pair-base.json", seed=1)
    head = run_file(h, "pair-head.json", seed=2, scale=1.3)
    url = "http://127.0.0.1:%d" % free_port()
    r = pr_gate(h, head, ["--mode", "paired", "--base-results", base, "--service-url", url], expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "paired BLOCK on the slowdown")
    check(_plain(r.summary.splitlines()[0]).startswith("**verdict not stored**: cannot reach the service: connection "
                                                       "refused"), "the summary leads with the unused service")
    assert_in("mode paired", r.summary, "the report names the mode")
    # Nothing was stored: report.html is the evidence page drawn from this job's base and head documents.
    html = open(h.path(r.outputs.get("report-html", ""))).read()
    check('id="run-local"' in html and '"base":{"status":"ok"' in html, "report.html holds base and head samples")
    r = pr_gate(h, run_file(h, "pair-same.json", seed=3), ["--mode", "paired", "--base-results", base, "--service-url", url],
                expect=0)
    check(r.outputs.get("verdict") == "PASS", "paired PASS on identical code")


def case_paired_on_service(h):
    """A paired PR gate against the real rnx-server: the base run, the head run and the verdict are stored, and the
    run page the comment links to shows the comment's BLOCK with the base samples; the overview lists it."""
    h.start_service(PROJECT)
    h.start_github({})
    base = run_file(h, "pair-base.json", seed=1, commit=BASE_SHA)
    head = run_file(h, "pair-head.json", seed=2, scale=1.3)
    r = pr_gate(h, head, ["--mode", "paired", "--base-results", base, "--service-url", h.service_url], expect=1)
    check(r.outputs.get("verdict") == "BLOCK", "paired BLOCK on the slowdown")
    head_id = r.outputs.get("run-id", "")
    check(head_id.isdigit(), "the head run was stored: run-id %r" % head_id)
    comment = rnx_comments(h)[-1]["body"]
    link = "%s/runs/%s" % (h.service_url, head_id)
    assert_in(link, comment, "the PR comment links to the head run's page")
    assert_in("BLOCK", comment, "the comment's verdict")
    decided = json.load(open(h.path(".rnx", "verdict.json")))
    base_id = decided["baseline"]["id"]
    check(base_id.isdigit() and base_id != head_id, "verdict.json names the stored base run, not %r" % base_id)

    # The evidence behind the page: the stored verdict is the one the gate decided, against the stored base run.
    status, body = http_get("%s/api/v1/runs/%s/evidence" % (h.service_url, head_id), h.token)
    check(status == 200, "evidence answered %d: %s" % (status, body))
    evidence = json.loads(body)
    stored = evidence["verdict"]
    check(stored is not None and stored["verdict"] == "BLOCK", "the stored verdict is BLOCK: %r" % stored)
    check(stored["baseline"]["id"] == base_id, "the stored verdict's baseline is the base run")
    check([c["decision"] for c in stored["configs"]] == [c["decision"] for c in decided["configs"]],
          "the stored decisions are the comment's")
    check(all(c.get("mde") is not None for c in stored["configs"]), "every configuration carries its mde")
    check(evidence["base_run"] and evidence["base_run"]["id"] == base_id, "the evidence names the base run")
    check(all(c["base"] and len(c["base"]["processes"]) == 3 for c in evidence["configs"]),
          "the base run's samples, 3 processes a configuration, are beside the head's")

    status, page = http_get(link, h.token)
    check(status == 200, "the run page answered %d" % status)
    check("No verdict is stored for this run" not in page, "the run page shows a verdict")
    assert_in("BLOCK", page, "the run page")
    assert_in("slower", page, "the run page's decisions")
    check(" in 0 processes" not in page, "the run page draws the base run's samples")

    status, overview = http_get("%s/projects/%s" % (h.service_url, PROJECT), h.token)
    check(status == 200, "the overview answered %d" % status)
    assert_in("/runs/%s" % head_id, overview, "the overview's last verdicts list the paired run")
    assert_in("BLOCK", overview, "the overview's last verdicts")

    # The same job re-run stores nothing twice and answers the same.
    r = pr_gate(h, head, ["--mode", "paired", "--base-results", base, "--service-url", h.service_url], expect=1)
    check(r.outputs.get("run-id") == head_id, "a re-run reuses the stored head run")
    check(json.load(open(h.path(".rnx", "verdict.json")))["baseline"]["id"] == base_id, "and the stored base run")


def case_token_messages(h):
    """Without RNX_TOKEN the gate refuses before it measures; a token lacking a scope is told so; a new accept
    token is to be kept as RNX_ACCEPT_TOKEN."""
    h.start_service(PROJECT)
    h.write_manifest(PROJECT, h.service_url)
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA, {"RNX_TOKEN": ""})
    started = time.time()
    r = h.run_rnx(["gate", "--no-github", "--mode", "stored"], env, expect=2)
    assert_in("RNX_TOKEN is empty", r.stderr, "the refusal names the variable")
    check(not os.path.exists(h.path(".rnx", "run.json")), "nothing was measured before the refusal")
    check(time.time() - started < 30, "the refusal comes before any benchmark")
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA,
                      {"RNX_TOKEN": "rnx_000000000000_" + "0" * 48})
    r = h.run_rnx(["gate", "--no-github", "--mode", "stored"], env, expect=2)
    assert_in("not valid", r.stderr, "a wrong token is refused before measuring")
    check(not os.path.exists(h.path(".rnx", "run.json")), "nothing was measured with a wrong token")

    # An upload token used to accept: told it lacks the accept scope, not that it belongs to another project.
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA)
    run_id = pr_gate(h, run_file(h, "head.json", seed=2), ["--service-url", h.service_url]).outputs["run-id"]
    env = dict(env, RNX_TOKEN=h.scoped_tokens["pull_request"])
    r = h.run_rnx(["accept", "--run-id", run_id, "--service-url", h.service_url, "--reason", "intended", "--by",
                   "ada"], env, expect=2)
    assert_in("has the upload scope", r.stderr, "the refusal names the token's scope")
    assert_in("accept", r.stderr, "and the scope it needs")
    check("another project" not in r.stderr, "no false 'another project':\n" + r.stderr)

    created = subprocess.run([h.server_bin, "admin", "token", "create", "--project", PROJECT, "--scope", "accept",
                              "--label", "maintainers", "--db", h.path("service.db")], capture_output=True, text=True,
                             timeout=60)
    check(created.returncode == 0, created.stderr)
    assert_in("RNX_ACCEPT_TOKEN", created.stderr, "an accept token is to be stored as RNX_ACCEPT_TOKEN")
    check("(RNX_TOKEN)" not in created.stderr, "not as RNX_TOKEN")


def case_bad_input(h):
    """Mistakes the user can make: exit 2 with a message naming the thing and the fix."""
    h.start_github({})
    good = run_file(h, "good.json", seed=1)
    cases = [
        (["--results", h.path("missing.json")], None, "missing.json"),
        (["--results", good, "--rope", "abc"], None, "--rope"),
        (["--results", good, "--rope", "1.5"], None, "rope"),
        (["--results", good, "--on-abstain", "maybe"], None, "--on-abstain"),
        (["--results", good, "--runner", "gpu"], None, "[gate.runners.gpu]"),
        (["--results", good, "--mode", "sometimes"], None, "--mode"),
        (["--results", good, "--service-url", "http://127.0.0.1:1", "--store", h.path("x.db")], None, "use one"),
        (["--results", good, "--service-url", "ftp://example"], None, "http://"),
        (["--results", good, "--config", h.path("nope.toml")], None, "nope.toml"),
    ]
    for args, _, needle in cases:
        env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA)
        r = h.run_rnx(["gate", *args], env, expect=2)
        assert_in(needle, r.stderr, "error message of %r" % args)
    bad_json = h.path("not-json.json")
    open(bad_json, "w").write("{\"schema\": ")
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA)
    r = h.run_rnx(["gate", "--results", bad_json], env, expect=2)
    assert_in("not-json.json", r.stderr, "malformed run file")
    env = h.event_env("pull_request", {"action": "opened"}, "refs/pull/7/merge", MERGE_SHA)
    r = h.run_rnx(["gate", "--results", good], env, expect=2)
    assert_in("$.pull_request.number", r.stderr, "payload error names the field")
    assert_in(env["GITHUB_EVENT_PATH"], r.stderr, "payload error names the file")
    env = h.event_env("push", dict(push_payload(), ref="refs/tags/v1.0"), "refs/tags/v1.0", BASE_SHA)
    r = h.run_rnx(["gate", "--results", good], env, expect=2)
    assert_in("not a branch", r.stderr, "a tag push")
    # A wrong service token is the user's configuration, not an outage: exit 2 naming RNX_TOKEN.
    h.start_service(PROJECT)
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA,
                      {"RNX_TOKEN": "rnx_wrong"})
    r = h.run_rnx(["gate", "--results", good, "--service-url", h.service_url], env, expect=2)
    assert_in("RNX_TOKEN", r.stderr, "unauthorized upload")
    r = h.run_rnx(["accept"], dict(env, GITHUB_EVENT_NAME=""), expect=2)
    assert_in("--run-id", r.stderr, "accept without a run")


def case_github_api_refuses(h):
    """A read-only or wrong GitHub token (a fork's PR) costs the comment and status, not the verdict."""
    h.start_service(PROJECT)
    h.start_github({"token": "ghs_someOtherToken"})
    push_gate(h, run_file(h, "base.json", seed=1))
    r = pr_gate(h, run_file(h, "slow.json", seed=2, scale=1.3), expect=1)
    assert_in("::warning title=rnx::could not comment on the pull request", r.stdout, "comment failure warning")
    assert_in("Bad credentials", r.stdout, "GitHub's message is shown")
    check(r.outputs.get("verdict") == "BLOCK", "the verdict stands")


def case_fork_without_token(h):
    """GitHub gives pull requests from forks no secrets: the service's refusal is WARN, not a failed build;
    the same refusal on the repository's own branch is a configuration error (exit 2)."""
    h.start_service(PROJECT)
    h.start_github({})
    env = h.event_env("pull_request", pull_request_payload(head_repo="contributor/kernels"), "refs/pull/7/merge",
                      MERGE_SHA, {"RNX_TOKEN": ""})
    r = h.run_rnx(["gate", "--results", run_file(h, "head.json", seed=2), "--service-url", h.service_url], env, expect=0)
    check(r.outputs.get("verdict") == "WARN", "a fork without the secret is WARN")
    assert_in("fork", r.outputs.get("reason", ""), "reason")
    env = h.event_env("pull_request", pull_request_payload(), "refs/pull/7/merge", MERGE_SHA, {"RNX_TOKEN": ""})
    r = h.run_rnx(["gate", "--results", run_file(h, "head2.json", seed=3), "--service-url", h.service_url], env,
                  expect=2)
    assert_in("RNX_TOKEN", r.stderr, "the missing token is named")


def case_local_cli(h):
    """Outside GitHub Actions: flags instead of GITHUB_*; rnx accept --run-id with the embedded store."""
    store = h.path("local.db")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "RNX_")) and k != "USER"}
    base = run_file(h, "base.json", seed=1)
    slow = run_file(h, "slow.json", seed=2, scale=1.3)
    r = subprocess_run(h, ["gate", "--results", base, "--store", store, "--commit", BASE_SHA, "--branch", "main"], env, 0)
    r = subprocess_run(h, ["gate", "--results", slow, "--store", store, "--commit", HEAD_SHA, "--branch", "feature",
                           "--base-branch", "main", "--pull-request", "9"], env, 1)
    assert_in("BLOCK", r.stdout, "local verdict")
    run_id = [l for l in r.stdout.splitlines() if l.startswith("rnx gate: stored run ")][0].split()[4]
    assert_in('If this slowdown is intended, make this run the new baseline: `rnx accept --run-id %s --store %s '
              '--reason "..."`.\n' % (run_id, store), r.stdout, "the local accept advice")
    # --by defaults to GITHUB_ACTOR, else USER; with neither, it is required (as docs/gate.md says).
    r = subprocess_run(h, ["accept", "--run-id", run_id, "--store", store, "--reason", "intended"], env, 2)
    assert_in("rnx: error: say who accepts the run: --by NAME (neither GITHUB_ACTOR nor USER is set to default to)",
              r.stderr, "accept without --by, GITHUB_ACTOR or USER")
    r = subprocess_run(h, ["accept", "--run-id", run_id, "--store", store, "--reason", "intended"],
                       dict(env, USER="alice"), 0)
    assert_in("is now the baseline of main in the embedded store %s (accepted by alice)" % store, r.stdout,
              "accept defaults --by to USER")
    r = subprocess_run(h, ["gate", "--results", run_file(h, "slow2.json", seed=5, scale=1.3), "--store", store,
                           "--commit", HEAD_SHA, "--branch", "feature", "--base-branch", "main", "--pull-request", "9"],
                       env, 0)
    assert_in("PASS", r.stdout, "PASS after accept")
    r = subprocess_run(h, ["accept", "--pull-request", "9", "--branch", "feature", "--store", store, "--reason", "x",
                           "--by", "me", "--project", PROJECT], dict(env, USER="alice"), 0)
    assert_in("(accepted by me)", r.stdout, "--by wins over USER")
    # A prepared run that lacks what the store files it under: the file, the JSON path and the flag that fixes it.
    r = subprocess_run(h, ["gate", "--results", base, "--store", store], env, 2)
    check(r.stderr == "rnx: error: %s: $.branch is empty and nothing else names the branch measured (no git branch, "
          "no GitHub event): pass --branch NAME\n" % base, "error %r" % r.stderr)
    r = subprocess_run(h, ["gate", "--results", slow, "--store", store, "--branch", "feature", "--pull-request", "9"],
                       env, 2)
    check(r.stderr == "rnx: error: %s: $.base_branch is empty for pull request #9: pass --base-branch NAME, the "
          "branch it merges into\n" % slow, "error %r" % r.stderr)


def subprocess_run(h, args, env, expect):
    import subprocess
    r = subprocess.run([h.rnx, *args], env=env, cwd=h.dir, capture_output=True, text=True, timeout=120)
    if r.returncode != expect:
        raise Failure("rnx %s exited %d, expected %d\n%s\n%s" % (" ".join(args), r.returncode, expect, r.stdout, r.stderr))
    return r


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rnx", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--case", action="append", choices=sorted(CASES), help="default: all")
    ap.add_argument("--keep", action="store_true", help="keep the temp folders")
    args = ap.parse_args()
    passed = failed = 0
    for name in args.case or sorted(CASES):
        h = Harness(os.path.abspath(args.rnx), os.path.abspath(args.server), name)
        started = time.time()
        try:
            CASES[name](h)
            passed += 1
            print("ok   %-28s %5.1fs" % (name, time.time() - started), flush=True)
        except Exception:  # noqa: BLE001 - every failure is reported, then the next case runs
            failed += 1
            print("FAIL %-28s (folder %s)" % (name, h.dir), flush=True)
            traceback.print_exc()
        finally:
            h.close()
            if not args.keep and not failed:
                shutil.rmtree(h.dir, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
