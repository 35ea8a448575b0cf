#!/usr/bin/env python3
"""The pages in a real browser: starts rnx-server on 127.0.0.1 with a store filled by pages_seed.py (three
environments, an accepted slowdown, an abstain), drives headless Chromium over the DevTools protocol, checks the
rendered DOM and the drawn charts of every page, saves a screenshot per page, and fails on any console error,
script exception or request that leaves 127.0.0.1.

  python3 tests/service/browser_pages.py --server build/bin/rnx-server --out build/browser_pages
"""
import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import websocket  # websocket-client (requirements.txt)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pages_seed  # noqa: E402

CHROMIUM = os.environ.get("RNX_CHROMIUM", "/usr/bin/chromium")
DEADLINE_S = 90


class Browser:
    """One headless Chromium page, driven over its DevTools websocket; every event is kept for the checks."""

    def __init__(self, workdir):
        self.profile = os.path.join(workdir, "chromium-profile")
        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
             "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-extensions",
             "--disable-default-apps", "--metrics-recording-only", "--mute-audio", "--hide-scrollbars",
             # Belt and braces: any name but 127.0.0.1 fails to resolve, so nothing can leave the machine.
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
             "--window-size=1360,900", "--remote-debugging-port=0", "--user-data-dir=" + self.profile, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        for _ in range(200):
            if os.path.exists(port_file) and open(port_file).read().count("\n") >= 1:
                break
            time.sleep(0.05)
        port = int(open(port_file).read().split("\n")[0])
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10))
        page = [t for t in targets if t["type"] == "page"][0]
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []
        for domain in ("Page", "Runtime", "Network", "Log"):
            self.call(domain + ".enable")

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self.events.append(msg)

    def wait_for(self, predicate, timeout=20):
        """Reads events until one satisfies `predicate`."""
        end = time.time() + timeout
        for e in self.events:
            if predicate(e):
                return e
        while time.time() < end:
            self.ws.settimeout(max(0.1, end - time.time()))
            msg = json.loads(self.ws.recv())
            self.events.append(msg)
            if predicate(msg):
                return msg
        raise TimeoutError("no matching DevTools event in %ss" % timeout)

    def js(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("script failed: %s\n%s" % (expression, r["exceptionDetails"]))
        return r["result"].get("value")

    def open(self, url):
        """Navigates and waits for the load event; returns the main document's HTTP status."""
        self.events = []
        frame = self.call("Page.navigate", url=url)
        if frame.get("errorText"):
            raise RuntimeError("navigation to %s failed: %s" % (url, frame["errorText"]))
        self.wait_for(lambda e: e.get("method") == "Page.loadEventFired")
        return self.document_status()

    def document_status(self):
        statuses = [e["params"]["response"]["status"] for e in self.events
                    if e.get("method") == "Network.responseReceived" and e["params"].get("type") == "Document"]
        return statuses[-1] if statuses else None

    def screenshot(self, path, width=1360):
        height = self.js("Math.ceil(document.documentElement.scrollHeight)")
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=min(max(height, 600), 4000),
                  deviceScaleFactor=1, mobile=False)
        shot = self.call("Page.captureScreenshot", format="png")
        self.call("Emulation.clearDeviceMetricsOverride")
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:  # the browser may already be gone; the process is reaped below either way
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Checks:
    def __init__(self):
        self.failures = []
        self.count = 0

    def expect(self, ok, what):
        self.count += 1
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)


def browser_problems(browser, allow_error_status=False):
    """Console errors, script exceptions, failed loads and any request to a host other than 127.0.0.1."""
    problems = []
    for e in browser.events:
        m = e.get("method")
        p = e.get("params", {})
        if m == "Runtime.exceptionThrown":
            problems.append("exception: " + json.dumps(p["exceptionDetails"])[:300])
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            problems.append("console.%s: %s" % (p["type"], json.dumps(p.get("args"))[:300]))
        elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
            if allow_error_status and "the server responded with a status of 4" in p["entry"].get("text", ""):
                continue
            problems.append("log: " + p["entry"].get("text", "")[:300])
        elif m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            host = urllib.parse.urlparse(url).hostname
            if not (url.startswith("data:") or url.startswith("about:") or host == "127.0.0.1"):
                problems.append("request left 127.0.0.1: " + url)
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            problems.append("load failed: %s" % p.get("errorText"))
    return problems


def paired_block(rnx, work, base, token, project, env_index=0):
    """A pull request that is 20% slower in every configuration, judged as the paired gate judges it: `rnx gate
    --mode paired` with the head run and the base revision's run measured beside it, stored on this server by the
    gate's own route (both runs uploaded, then POST /api/v1/runs/{head}/paired-verdict). Returns the head run's id,
    the verdict the gate decided (its verdict.json) and the pair's env_id."""
    import random
    from datetime import datetime, timedelta, timezone
    rng = random.Random(11)
    env = dict(pages_seed.ENVIRONMENTS[env_index])
    env["cpu"] += " (paired job)"  # an environment of its own, with no baseline: the pair is its only evidence
    env["env_id"] = pages_seed.environment_of(env)["env_id"]
    cfgs = pages_seed.configs(1, [1])
    when = datetime(2026, 9, 6, 20, 0, tzinfo=timezone.utc)  # beside the seeded history
    base_doc = pages_seed.document(project, env, when, "%040x" % 1, "main", None, cfgs, {}, rng, 40, 5)
    slow = {k: 1.2 for k in pages_seed.KERNELS}
    head_doc = pages_seed.document(project, env, when + timedelta(minutes=20), "%040x" % 2, "feature-slow", 777,
                                   cfgs, slow, rng, 40, 5)
    files = {}
    for name, doc in (("base", base_doc), ("head", head_doc)):
        files[name] = os.path.join(work, "paired-%s.json" % name)
        with open(files[name], "w", encoding="utf-8") as f:
            json.dump(doc, f)
    out = os.path.join(work, "paired-gate")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and not k.startswith("RNX_")}
    r = subprocess.run([rnx, "gate", "--mode", "paired", "--results", files["head"], "--base-results", files["base"],
                        "--service-url", base, "--project", project, "--commit", head_doc["commit"],
                        "--branch", "feature-slow", "--base-branch", "main", "--pull-request", "777", "--no-github",
                        "--out-dir", out], env=dict(clean, RNX_TOKEN=token), cwd=work, capture_output=True,
                       text=True, timeout=60)
    if r.returncode not in (0, 1):
        sys.exit("browser_pages: rnx gate --mode paired failed (%d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
    with open(os.path.join(out, "verdict.json"), encoding="utf-8") as f:
        decided = json.load(f)
    return decided["head_run_id"], decided, env["env_id"]


def explained_pair(rnx, work, base, token, project):
    """A pull request 30% slower in its one configuration, stored as the paired gate stores it (both runs uploaded,
    then POST /api/v1/runs/{head}/paired-verdict) with the explanation the gate attached: the demo's four-pass
    softmax as its profile diff names it (docs/gate.md, Why it got slower). The store keeps the explanation beside
    the decisions it derives again. Returns the head run's id."""
    import random
    from datetime import datetime, timedelta, timezone
    rng = random.Random(17)
    # The paired job's environment and configuration (paired_block): no row, series or environment of its own. The
    # base run is filed as the gate files it, a pull request's run, so it never becomes main's baseline.
    env = dict(pages_seed.ENVIRONMENTS[0])
    env["cpu"] += " (paired job)"
    cfgs = pages_seed.configs(1, [1])
    when = datetime(2026, 9, 7, 20, 0, tzinfo=timezone.utc)
    base_doc = pages_seed.document(project, env, when, "%040x" % 3, "main", 778, cfgs, {}, rng, 40, 5)
    head_doc = pages_seed.document(project, env, when + timedelta(minutes=20), "%040x" % 4, "four-pass", 778, cfgs,
                                   {k: 1.3 for k in pages_seed.KERNELS}, rng, 40, 5)
    files = {}
    for name, doc in (("base", base_doc), ("head", head_doc)):
        files[name] = os.path.join(work, "explained-%s.json" % name)
        with open(files[name], "w", encoding="utf-8") as f:
            json.dump(doc, f)
    r = subprocess.run([rnx, "compare", files["base"], files["head"], "--format", "json"], capture_output=True,
                       text=True, timeout=60)
    decided = json.loads(r.stdout)
    slower = [c for c in decided["configs"] if c["decision"] == "slower"]
    if not slower:
        sys.exit("browser_pages: the 30%% slower pair was not judged slower: %r" % decided["configs"])
    slower[0]["explanation"] = {
        "status": "explained", "note": "", "profiler": "libtorch profiler", "ranked_by": "self CPU time",
        "profiled_calls": 10, "base_ms": 0.12, "head_ms": 0.3, "counts_moved": True, "count_threshold": 0.01,
        "cost_s": 3.8,
        "changes": [{"name": n, "kind": k, "base_calls": bc, "head_calls": hc, "base_ms": bm, "head_ms": hm,
                     "share": sh} for (n, k, bc, hc, bm, hm, sh) in (
            ("aten::exp", "added", 0, 1, 0, 0.12, 0.4), ("aten::_softmax", "removed", 1, 0, 0.1, 0, -0.1 / 0.12),
            ("aten::max", "added", 0, 1, 0, 0.06, 0.2), ("aten::sub", "added", 0, 1, 0, 0.05, 0.5 / 3),
            ("aten::div", "added", 0, 1, 0, 0.04, 0.4 / 3), ("aten::sum", "added", 0, 1, 0, 0.03, 0.1),
            ("aten::softmax", "removed", 1, 0, 0.02, 0, -0.02 / 0.12))],
        "counts": [{"kind": "operator_calls", "base": 2, "head": 5, "change": 1.5},
                   {"kind": "bytes", "base": 4194304, "head": 4194304, "change": 0.0}]}
    client = pages_seed.Client(base, token)
    base_id = client.post("/api/v1/runs", base_doc)["id"]
    head_id = client.post("/api/v1/runs", head_doc)["id"]
    client.post("/api/v1/runs/%s/paired-verdict" % head_id, {"base_run_id": base_id, "verdict": decided})
    return str(head_id)


def first_push(base, token, project):
    """A project's first push, judged as the gate does after storing it: the run is its branch's first baseline."""
    import random
    from datetime import datetime, timezone
    rng = random.Random(3)
    client = pages_seed.Client(base, token)
    doc = pages_seed.document(project, pages_seed.ENVIRONMENTS[0], datetime(2026, 11, 1, 8, 0, tzinfo=timezone.utc),
                              "%040x" % 5, "main", None, pages_seed.configs(1, [1]), {}, rng, 20, 2)
    run = client.post("/api/v1/runs", doc)["id"]
    client.post("/api/v1/runs/%s/verdict" % run, {})
    return run


UNSTABLE_CONFIG = ("layernorm", "compile", 8)
UNSTABLE_REASON = "process medians differ 300x (0.079 to 23.99 ms): a noisy neighbour"


def unstable_gate(rnx, work, base, token, project):
    """A push to main of one configuration measured in three processes whose medians are 0.080, 23.99 and 0.079 ms
    (flagged unstable), gated by `rnx gate` against the steady push before it on the same machine (a CPU box whose
    device names its CPU), and a steady run of a twin machine that differs only in threads. Returns the unstable
    run's id, the gate's verdict.json, its terminal output and the twin's run id."""
    import random
    from datetime import datetime, timedelta, timezone
    rng = random.Random(5)
    client = pages_seed.Client(base, token)
    machine = {"device": "cpu: AMD EPYC", "cpu": "AMD EPYC", "speed": 1.0}
    when = datetime(2026, 11, 20, 8, 0, tzinfo=timezone.utc)
    steady = pages_seed.document(project, machine, when, "%040x" % 21, "main", None, [UNSTABLE_CONFIG], {}, rng, 60, 3)
    client.post("/api/v1/runs", steady)
    twin = pages_seed.document(project, machine, when, "%040x" % 22, "main", None, [UNSTABLE_CONFIG], {}, rng, 60, 3)
    twin["environment"]["threads"] = 4
    twin["environment"]["env_id"] = pages_seed.env_id_of(twin["environment"])
    twin_run = client.post("/api/v1/runs", twin)["id"]
    noisy = pages_seed.document(project, machine, when + timedelta(hours=1), "%040x" % 23, "main", None,
                                [UNSTABLE_CONFIG], {}, rng, 60, 3)
    result = noisy["results"][0]
    result["samples_ms"] = [round(m * (1 + 0.002 * (i - 10)), 6) for m in (0.080, 23.99, 0.079) for i in range(20)]
    result["groups"] = [20, 20, 20]
    result["unstable"] = True
    result["message"] = UNSTABLE_REASON
    path = os.path.join(work, "unstable-run.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(noisy, f)
    out = os.path.join(work, "unstable-gate")
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_") and not k.startswith("RNX_")}
    r = subprocess.run([rnx, "gate", "--mode", "stored", "--results", path, "--service-url", base, "--project",
                        project, "--commit", noisy["commit"], "--branch", "main", "--base-branch", "main",
                        "--no-github", "--out-dir", out], env=dict(clean, RNX_TOKEN=token), cwd=work,
                       capture_output=True, text=True, timeout=60)
    if r.returncode not in (0, 1):
        sys.exit("browser_pages: rnx gate of the unstable run failed (%d):\n%s%s" % (r.returncode, r.stdout, r.stderr))
    with open(os.path.join(out, "verdict.json"), encoding="utf-8") as f:
        decided = json.load(f)
    return decided["head_run_id"], decided, r.stdout, twin_run


def printed(ms):
    """A time as the gate's terminal prints it (4 significant digits)."""
    return "%.4g" % ms


NO_SIDEWAYS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"


def server_admin(server, db):
    """`rnx-server admin ... --db DB` as a function: its arguments in, its standard output (stripped) out."""
    def admin(*args):
        return subprocess.run([server, "admin", *args, "--db", db], check=True, capture_output=True,
                              text=True).stdout.strip()
    return admin


def one_number(browser, checks, out, base, block_run, block_decided, unstable_run, decided, terminal, twin_run):
    """Every page shows the gate's number (verdict.json's, as its terminal printed it) for the paired BLOCK and the
    unstable run, and flags the unstable run on every page that shows it."""
    config = "%s/%s/float32/b%d" % UNSTABLE_CONFIG
    head_ms = [c for c in decided["configs"] if c["kernel"] == UNSTABLE_CONFIG[0]][0]["head_ms"]
    shown = printed(head_ms)
    checks.expect(shown in terminal, "unstable run: the gate's terminal prints %s ms" % shown)

    # The paired BLOCK's run page: each configuration's base and head are the verdict's.
    browser.open(base + "/runs/" + block_run)
    summaries = browser.js("[...document.querySelectorAll('details.dist summary')].map(s => s.textContent)")
    for c in block_decided["configs"]:
        label = "%s/%s/%s/b%d" % (c["kernel"], c["runtime"], c["dtype"], c["batch"])
        text = [t for t in summaries if t.startswith(label + " ")]
        want = "base %s ms" % printed(c["base_ms"]), "head %s ms" % printed(c["head_ms"]), "\u00d7%.3f" % c["ratio"]
        checks.expect(len(text) == 1 and all(w in text[0] for w in want),
                      "paired BLOCK: %s shows the gate's %s (%s)" % (label, ", ".join(want), text[:1]))

    # The unstable run's page: the gate's number, the banner, the reason, a log axis for a 300x spread.
    browser.open(base + "/runs/" + unstable_run)
    page = browser.js("""({summary: document.querySelector('details.dist summary').textContent,
        banner: (document.querySelector('.banner.unstable') || {}).textContent || '',
        reason: document.querySelector('table.verdict-table td.reason').textContent,
        machine: document.querySelector('dl.facts').textContent,
        scale: new Promise(r => setTimeout(() => r(document.querySelector('details.dist canvas')
            .getAttribute('data-scale')), 50))})""")
    checks.expect(("head %s ms" % shown) in page["summary"] and "unstable" in page["summary"],
                  "unstable run page: head %s ms, flagged (%s)" % (shown, page["summary"]))
    checks.expect("measured unstable" in page["banner"] and UNSTABLE_REASON in page["reason"],
                  "unstable run page: the banner and the reason (%s)" % page["reason"][:80])
    checks.expect("AMD EPYC AMD EPYC" not in page["machine"] and "AMD EPYC" in page["machine"],
                  "unstable run page: the machine named once (%s)" % page["machine"][:120])
    browser.screenshot(os.path.join(out, "run_unstable.png"))
    # The strip chart reads its scale once drawn.
    scale = browser.js("document.querySelector('details.dist canvas').getAttribute('data-scale')")
    checks.expect(scale == "log", "unstable run page: samples spanning 300x on a log axis (%s)" % scale)

    # The overview: the machine's baseline is the gate's number, flagged.
    browser.open(base + "/projects/demo")
    cell = browser.js("""(() => { const rows = [...document.querySelectorAll('table.configs tr.config-row')];
        let label = '';
        for (const tr of rows) {
            const first = tr.querySelector('td[rowspan] code');
            if (first) label = first.textContent;
            const run = tr.querySelector('td.num a[href="/runs/RUN"]');
            if (label === CONFIG && run) return tr.querySelector('td.num').textContent;
        }
        return ''; })()""".replace("RUN", unstable_run).replace("CONFIG", json.dumps(config)))
    checks.expect(cell.startswith(shown + " ms") and "unstable" in cell,
                  "overview: the unstable baseline is the gate's %s ms, flagged (%s)" % (shown, cell))

    # The history: the run's point is the gate's number, drawn as a cross, listed with its reason.
    env_id = decided["env_id"]
    browser.open(base + "/projects/demo/configs/%s?env_id=%s" % (urllib.parse.quote(config, safe=""), env_id))
    point = browser.js("""(() => { const c = Chart.getChart(document.querySelector('canvas.history-chart'));
        for (const d of c.data.datasets) { if (d.rnxHelper) continue;
          const i = d.data.findIndex(p => p.run === RUN);
          if (i >= 0) return {y: d.data[i].y, style: d.pointStyle[i], lo: d.data[i].lo}; }
        return null; })()""".replace("RUN", json.dumps(unstable_run)))
    listed = browser.js("(document.querySelector('table.unstable-runs') || {}).textContent || ''")
    checks.expect(point is not None and printed(point["y"]) == shown and point["style"] == "crossRot"
                  and point["lo"] is None,
                  "history: the unstable run is the gate's %s ms, a cross without an interval (%s)" % (shown, point))
    checks.expect(UNSTABLE_REASON in listed and shown in listed, "history: the unstable run listed with its reason")
    browser.screenshot(os.path.join(out, "history_unstable.png"))

    # The comparison with the twin machine: the field that differs (threads) has a column; the unstable run's
    # number is the gate's, with a warning in place of an interval.
    browser.open(base + "/compare?runs=%s,%s" % (twin_run, unstable_run))
    cmp = browser.js("""({heads: [...document.querySelectorAll('table.runs th')].map(t => t.textContent),
        threads: [...document.querySelectorAll('table.runs tbody tr')].map(tr => tr.children[4].textContent),
        cells: [...document.querySelectorAll('table.ratios tbody tr td')].map(td => td.textContent),
        banner: (document.querySelector('.banner.unstable') || {}).textContent || ''})""")
    checks.expect("threads" in cmp["heads"] and sorted(cmp["threads"]) == ["2", "4"],
                  "compare: two like machines tell their threads apart (%s, %s)" % (cmp["heads"], cmp["threads"]))
    checks.expect(any(c.startswith(shown) for c in cmp["cells"]) and
                  any("unstable: no interval" in c for c in cmp["cells"]),
                  "compare: the unstable run is the gate's %s ms, with a warning for its ratio (%s)"
                  % (shown, cmp["cells"]))
    checks.expect(UNSTABLE_REASON in cmp["banner"], "compare: the unstable run's reason is said")
    checks.expect(not browser_problems(browser), "one number: no console error %s" % browser_problems(browser))
    browser.screenshot(os.path.join(out, "compare_unstable.png"))


def wide_tables(browser, checks, base, runs):
    """At 1400 px (and 1280, for room), the run pages' tables fit their boxes: nothing is cut off on the right."""
    try:
        for width in (1400, 1280):
            browser.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                         mobile=False)
            for run in runs:
                browser.open(base + "/runs/" + run)
                cut = browser.js("""[...document.querySelectorAll('.table-scroll')]
                    .filter(b => b.scrollWidth > b.clientWidth + 1).length""")
                checks.expect(cut == 0 and browser.js(NO_SIDEWAYS),
                              "%d px: run %s's tables fit their boxes (%d cut off)" % (width, run, cut))
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride")


def main():
    started = time.time()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="the rnx-server binary")
    ap.add_argument("--rnx", required=True, help="the rnx binary (its gate stores the paired pull request)")
    ap.add_argument("--out", required=True, help="folder for the screenshots")
    a = ap.parse_args()
    if not os.path.exists(CHROMIUM):
        sys.exit("browser_pages: %s not found: install the Debian package chromium (scripts/setup.sh)" % CHROMIUM)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rnx-browser-")
    server = None
    browser = None
    checks = Checks()
    try:
        db = os.path.join(work, "rnx.sqlite")
        admin = server_admin(a.server, db)

        admin("project", "create", "demo")
        admin("project", "create", "secret")
        token = admin("token", "create", "--project", "demo", "--scope", "admin")
        secret_token = admin("token", "create", "--project", "secret", "--scope", "admin")
        admin("project", "visibility", "demo", "public")
        admin("project", "create", "empty")
        admin("project", "visibility", "empty", "public")
        admin("project", "create", "fresh")
        admin("project", "visibility", "fresh", "public")
        fresh_token = admin("token", "create", "--project", "fresh", "--scope", "baseline")
        server = subprocess.Popen([a.server, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = server.stdout.readline()
        if "listening on" not in line:
            sys.exit("browser_pages: rnx-server did not start: " + line)
        base = line.split("listening on ")[1].split(" ")[0]
        facts = pages_seed.seed(base, token, "demo", runs=45, n_kernels=2, batches=(1, 8), envs=3, samples=40)
        pages_seed.seed(base, secret_token, "secret", runs=3, n_kernels=1, batches=(1,), envs=1, samples=20)
        block_run, block_decided, paired_env = paired_block(a.rnx, work, base, token, "demo")
        block_verdict = block_decided["verdict"]
        fresh_run = first_push(base, fresh_token, "fresh")
        explained_run = explained_pair(a.rnx, work, base, token, "demo")
        unstable_run, unstable_decided, unstable_terminal, twin_run = unstable_gate(a.rnx, work, base, token, "demo")
        print("seeded %d runs in %.1fs" % (len(facts["runs"]) + 2, time.time() - started))

        browser = Browser(work)
        n_configs = len(facts["configs"])

        # Landing page: the public projects, not the private one.
        status = browser.open(base + "/")
        landing = browser.js("""({names: [...document.querySelectorAll('table.projects tbody td:first-child a')]
            .map(a => a.textContent), brand: document.querySelector('header.top a.brand').getAttribute('href')})""")
        checks.expect(status == 200, "landing: HTTP 200 (got %s)" % status)
        checks.expect(landing["names"] == ["demo", "empty", "fresh"],
                      "landing: lists the public projects only (%s)" % landing["names"])
        checks.expect(landing["brand"] == "/", "landing: the brand links to the list of projects")
        checks.expect(not browser_problems(browser), "landing: no console error %s" % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "landing.png"))

        # An empty project says how to upload, instead of bare table headers.
        status = browser.open(base + "/projects/empty")
        empty = browser.js("""({text: (document.querySelector('.empty-state') || {}).textContent || '',
            tables: document.querySelectorAll('table').length})""")
        checks.expect(status == 200 and "rnx gate --service-url" in empty["text"] and empty["tables"] == 0,
                      "empty project: an empty state that says how to upload, no bare tables")

        # A project's first push: stored as its first baseline, which the overview says (not "make it the baseline").
        browser.open(base + "/projects/fresh")
        reason = browser.js("document.querySelector('table.verdicts tbody td:last-child').textContent")
        checks.expect("stored as the first baseline of main" in reason and "rnx accept" not in reason
                      and "make run" not in reason,
                      "first push: the overview calls it the first baseline (%s)" % reason)

        # Project overview.
        status = browser.open(base + "/projects/demo")
        checks.expect(status == 200, "overview: HTTP 200 (got %s)" % status)
        dom = browser.js("""({h1: document.querySelector('h1').textContent,
            rows: document.querySelectorAll('table.configs tr.config-row').length,
            envs: document.querySelectorAll('table.envs tbody tr').length,
            sparks: document.querySelectorAll('svg.spark polyline').length,
            scales: [...document.querySelectorAll('.spark-scale')].filter(s => / ms$/.test(s.textContent)).length,
            trends: document.querySelectorAll('td.trend.t-slower, td.trend.t-faster, td.trend.t-flat').length,
            blank_trends: [...document.querySelectorAll('td.trend')].filter(td => !td.textContent.trim()).length,
            deltas: [...document.querySelectorAll('td.delta')].filter(d =>
                /^[+-]\d+\.\d% \(95%: [+-]\d+\.\d% to [+-]\d+\.\d%\)$/.test(d.textContent)).length,
            chips: document.querySelectorAll('table.configs .chip').length,
            mixed: [...document.querySelectorAll('table.configs tr.config-row')].filter(tr => {
                const env = tr.querySelector('td code[title]').getAttribute('title');
                return [...tr.querySelectorAll('a[href^="/runs/"] .chip')].length > 0 &&
                       env === PAIRED_ENV && tr.textContent.includes('equivalent'); }).length,
            verdicts: document.querySelectorAll('table.verdicts tbody tr').length,
            block: [...document.querySelectorAll('table.verdicts tbody tr')].filter(tr =>
                tr.querySelector('td a').textContent === BLOCK_RUN && tr.textContent.includes('BLOCK') &&
                tr.textContent.includes('#777') && (tr.querySelector('.badge') || {}).textContent === 'paired').length,
            compare: !!document.querySelector('a[href^="/compare?runs="]')})"""
                         .replace("BLOCK_RUN", json.dumps(block_run)).replace("PAIRED_ENV", json.dumps(paired_env)))
        checks.expect(dom["h1"].startswith("demo"), "overview: heading names the project")
        checks.expect(dom["rows"] == n_configs * 3 + 2 + 2,
                      "overview: a row per configuration and environment (%d)" % dom["rows"])
        checks.expect(dom["envs"] == 6, "overview: six environments listed")
        # The paired job's environment has no baseline of main: its rows show its decisions, no sparkline.
        # The unstable machine's pushes draw one more; its twin has a single baseline, too few for a line.
        checks.expect(dom["sparks"] == n_configs * 3 + 1, "overview: a sparkline per series with baselines (%d)"
                      % dom["sparks"])
        checks.expect(dom["blank_trends"] == 0, "overview: no blank trend cell (a dash without a trend)")
        checks.expect(dom["scales"] == dom["sparks"], "overview: every sparkline has its scale (lowest-highest ms)")
        checks.expect(dom["trends"] >= n_configs, "overview: trend arrows drawn (%d)" % dom["trends"])
        checks.expect(dom["deltas"] >= n_configs,
                      "overview: a signed delta%% with its 95%% interval (%d)" % dom["deltas"])
        checks.expect(dom["chips"] > 0 and dom["verdicts"] > 0, "overview: last verdicts shown")
        checks.expect(dom["mixed"] == 0, "overview: an environment's row shows only its own decisions")
        checks.expect(block_verdict == "BLOCK" and dom["block"] == 1,
                      "overview: the paired pull request's BLOCK (run %s, #777, badged paired) in the last verdicts"
                      % block_run)
        checks.expect(dom["compare"], "overview: links to the hardware comparison")
        checks.expect(not browser_problems(browser), "overview: no console error, no outside request %s"
                      % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "overview.png"))

        # Configuration history: log scale, one colour per environment, PR runs apart from the base branch's line,
        # the baseline as a step line with its band, distinct time ticks, the accepted slowdown marked once.
        config = urllib.parse.quote(facts["configs"][0], safe="")
        history_js = """(() => { const c = Chart.getChart(document.querySelector('canvas.history-chart'));
            const shown = c.data.datasets.filter(d => !d.rnxHelper);
            const count = (style) => shown.reduce((n, d) => n + d.pointStyle.filter(s => s === style).length, 0);
            const ticks = c.scales.x.ticks.map(t => c.scales.x.getLabelForValue ? t.label : t.value);
            return {scale: c.scales.y.type, envs: shown.filter(d => !d.rnxPullRequests).length,
                    points: shown.reduce((n, d) => n + d.data.length, 0),
                    prApart: shown.filter(d => d.rnxPullRequests).reduce((n, d) => n + d.data.length, 0),
                    prOnLine: shown.filter(d => !d.rnxPullRequests && d.showLine)
                                   .reduce((n, d) => n + d.data.filter(p => p.pr != null).length, 0),
                    triangles: count('triangle'), diamonds: count('rectRot'),
                    bands: c.data.datasets.filter(d => d.rnxBand && d.data.length > 1).length,
                    bandFill: c.data.datasets.filter(d => d.rnxBand && d.fill === '+1').length,
                    steps: c.data.datasets.filter(d => d.rnxBaseline && d.stepped === 'after').length,
                    ticks: ticks,
                    colours: Object.fromEntries(shown.filter(d => !d.rnxPullRequests)
                                                     .map(d => [d.label.slice(0, 12), d.borderColor])),
                    red: shown.filter(d => ['#d00000', '#d62728', '#d00', '#ff0000', 'red']
                                           .includes(String(d.borderColor).toLowerCase())).length,
                    reason: (document.querySelector('table.accepted td:last-child') || {}).textContent || '',
                    bold: document.querySelectorAll('table.accepted b').length}; })()"""
        status = browser.open(base + "/projects/demo/configs/" + config + "?scale=log")
        checks.expect(status == 200, "history: HTTP 200 (got %s)" % status)
        chart = browser.js(history_js)
        checks.expect(chart["scale"] == "logarithmic", "history: log scale on request")
        checks.expect(chart["envs"] == 4, "history: one series per environment")
        checks.expect(chart["points"] >= 40, "history: every run drawn (%d points)" % chart["points"])
        checks.expect(chart["prApart"] >= 5 and chart["prOnLine"] == 0,
                      "history: pull-request runs drawn apart from the base branch's line (%d)" % chart["prApart"])
        checks.expect(chart["triangles"] == 1, "history: the accepted slowdown marked once (%d)" % chart["triangles"])
        checks.expect(chart["diamonds"] > 10, "history: baselines marked")
        # The paired pull request's environment has no baseline (both its runs belong to the pull request).
        checks.expect(chart["bands"] == 6 and chart["bandFill"] == 3 and chart["steps"] == 3,
                      "history: a baseline step line and a filled band per environment with a baseline (%s)" % chart)
        ticks = chart["ticks"]
        checks.expect(len(ticks) >= 3 and len(set(ticks)) == len(ticks),
                      "history: the x ticks are distinct dates/times %s" % ticks)
        checks.expect(chart["red"] == 0, "history: no series is red like the accepted marker")
        checks.expect("<b>15%</b>" in chart["reason"] and chart["bold"] == 0,
                      "history: the accepted reason shown as text, its markup escaped")
        checks.expect(not browser_problems(browser), "history: no console error, no outside request %s"
                      % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "history.png"))
        colours = chart["colours"]
        # Filtered to one environment, that environment keeps its colour.
        last_env = facts["envs"][2]
        browser.open(base + "/projects/demo/configs/" + config + "?env_id=" + last_env)
        filtered = browser.js(history_js)
        checks.expect(filtered["colours"] == {last_env[:12]: colours[last_env[:12]]},
                      "history: an environment keeps its colour when filtered (%s)" % filtered["colours"])
        # A configuration the accepted run did not slow down: no accepted marker there.
        unchanged = [c for c in facts["configs"] if not c.startswith(pages_seed.KERNELS[0] + "/")][0]
        browser.open(base + "/projects/demo/configs/" + urllib.parse.quote(unchanged, safe=""))
        other = browser.js(history_js)
        checks.expect(other["triangles"] == 0 and other["reason"] == "",
                      "history: no accepted marker on %s, which the accepted run did not slow down" % unchanged)
        browser.open(base + "/projects/demo/configs/" + config + "?scale=log")
        # Click the first point of the first series: the browser must open that run's page.
        target = browser.js("""(() => { const c = Chart.getChart(document.querySelector('canvas.history-chart'));
            const i = c.data.datasets.findIndex(d => !d.rnxHelper && !d.rnxPullRequests);
            const el = c.getDatasetMeta(i).data[0]; const r = c.canvas.getBoundingClientRect();
            return {x: r.left + el.x, y: r.top + el.y, run: c.data.datasets[i].data[0].run}; })()""")
        browser.events = []
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=target["x"], y=target["y"], button="left",
                         clickCount=1)
        browser.wait_for(lambda e: e.get("method") == "Page.loadEventFired")
        checks.expect(browser.js("location.pathname") == "/runs/" + target["run"],
                      "history: clicking a point opens run %s" % target["run"])

        # The pull request's BLOCK on its run page: each change as a signed percentage with its interval and a
        # chart of the ratio against the band.
        status = browser.open(base + "/runs/" + block_run)
        block = browser.js("""({banner: document.querySelector('.banner').textContent,
            pr: document.querySelector('dl.facts').textContent.includes('pull request #777'),
            change: document.querySelector('table.verdict-table td.change').textContent,
            rows: document.querySelectorAll('table.verdict-table tbody tr').length,
            svg: document.querySelectorAll('table.verdict-table svg.ratio-band rect.band').length,
            dot: document.querySelectorAll('table.verdict-table svg.ratio-band circle.ratio').length,
            decisions: [...document.querySelectorAll('table.verdict-table tbody tr .chip')].map(c => c.textContent),
            paired: [...document.querySelectorAll('p.legend')].some(p => p.textContent.includes('paired comparison')),
            compared: [...document.querySelectorAll('dl.facts dd a')].map(a => a.getAttribute('href'))})""")
        checks.expect(status == 200 and block["banner"].startswith(block_verdict) and block["pr"],
                      "pull request run: the gate's %s on its run page (%s)" % (block_verdict, block["banner"][:60]))
        decided = [c["decision"] for c in block_decided["configs"]]
        checks.expect(sorted(block["decisions"]) == sorted(decided),
                      "pull request run: the page's decisions are the gate's (%s, %s)" % (block["decisions"], decided))
        checks.expect(block["paired"] and "/runs/" + block_decided["baseline"]["id"] in block["compared"],
                      "pull request run: judged paired, against the stored base run %s (%s)"
                      % (block_decided["baseline"]["id"], block["compared"]))
        change_re = r"^\+(1[5-9]|2[0-5])\.\d% \(95%: \+\d+\.\d% to \+\d+\.\d%\)$"
        checks.expect(re.match(change_re, block["change"]) is not None,
                      "pull request run: the change as a signed percentage with its interval (%s)" % block["change"])
        checks.expect(block["rows"] == 2 and block["svg"] == 2 and block["dot"] == 2,
                      "pull request run: each configuration's ratio drawn against the band")
        checks.expect(not browser_problems(browser), "pull request run: no console error")
        browser.screenshot(os.path.join(a.out, "run_block.png"))

        # Run page of the accepted slowdown: verdict table, strip charts of base and head per worker process.
        status = browser.open(base + "/runs/" + facts["accepted_run"])
        checks.expect(status == 200, "run: HTTP 200")
        run = browser.js("""({rows: document.querySelectorAll('table.verdict-table tbody tr').length,
            slower: document.querySelectorAll('table.verdict-table .chip.d-slower').length,
            banner: document.querySelector('.banner').textContent,
            accepted: (document.querySelector('.banner.accepted') || {}).textContent || '',
            bands: document.querySelectorAll('table.verdict-table svg.ratio-band').length,
            charts: [...document.querySelectorAll('details.dist[open] canvas')].filter(c => Chart.getChart(c)).length,
            open: document.querySelectorAll('details.dist[open]').length,
            sides: (() => { const c = Chart.getChart(document.querySelector('details.dist[open] canvas'));
                            return c.data.datasets.map(d => d.label).join(','); })()})""")
        checks.expect(run["rows"] == n_configs, "run: a verdict row per configuration (%d)" % run["rows"])
        checks.expect(run["slower"] >= 1, "run: the slowdown is called slower")
        checks.expect(run["banner"].startswith("BLOCK"), "run: the BLOCK verdict is shown")
        checks.expect(run["accepted"].startswith("Accepted") and "maintainer <on-call & perf>" in run["accepted"],
                      "run: the accepted run says it was accepted, by whom (%s)" % run["accepted"][:80])
        checks.expect(run["bands"] == n_configs, "run: a ratio-against-band chart per configuration")
        checks.expect(run["charts"] == run["open"] and run["open"] >= 1, "run: a strip chart per open configuration")
        checks.expect(run["sides"] == "base,head", "run: base and head side by side")
        checks.expect(not browser_problems(browser), "run: no console error %s" % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "run.png"))
        folded_drawn = []
        unfold = """(() => { const d = document.querySelector('details.dist:not([open])'); if (!d) return null;
            const before = !!Chart.getChart(d.querySelector('canvas')); d.open = true;
            return new Promise(r => setTimeout(() => r(!before && !!Chart.getChart(d.querySelector('canvas'))), 100));
            })()"""
        folded_drawn.append(browser.js(unfold))

        # Why it got slower: the paired verdict's explanation as tables on its run page, open for a slower one.
        status = browser.open(base + "/runs/" + explained_run)
        why = browser.js("""(() => { const h = [...document.querySelectorAll('h2')]
              .find(x => x.textContent === 'Why the time moved');
            const d = document.querySelector('details.explain');
            const rows = d ? [...d.querySelectorAll('table.explain-table tbody tr')] : [];
            const box = d ? d.querySelector('table.explain-table').getBoundingClientRect() : null;
            return {heading: !!h, open: !!(d && d.open), chip: d ? d.querySelector('.chip').textContent : '',
              rows: rows.map(tr => [...tr.querySelectorAll('td')].map(td => td.textContent)),
              counts: d ? [...d.querySelectorAll('table.count-table tbody tr')].map(tr => tr.textContent) : [],
              visible: !!(box && box.width > 0 && box.height > 0)}; })()""")
        checks.expect(status == 200 and why["heading"] and why["open"] and why["chip"] == "slower" and why["visible"],
                      "explained run: a drawn, open 'Why the time moved' section for the slower configuration (%r)"
                      % {k: why[k] for k in ("heading", "open", "chip", "visible")})
        added = [r[0] for r in why["rows"] if len(r) == 7 and r[1] == "added" and r[6].endswith("of the added time")]
        checks.expect(sorted(added) == ["aten::div", "aten::exp", "aten::max", "aten::sub", "aten::sum"],
                      "explained run: the extra operators with their share of the added time (%r)" % why["rows"])
        checks.expect(any(c.startswith("operator calls25+150.0%") for c in why["counts"]),
                      "explained run: the operator calls beside the time, exact (%r)" % why["counts"])
        checks.expect(not browser_problems(browser), "explained run: no console error")
        browser.screenshot(os.path.join(a.out, "run_explained.png"))

        # Run page of the abstain: the unstable message said once.
        status = browser.open(base + "/runs/" + facts["abstain_run"])
        abstain = browser.js("""({chips: document.querySelectorAll('table.verdict-table .chip.d-abstain').length,
            reasons: [...document.querySelectorAll('table.verdict-table td.reason')].map(td => td.textContent)})""")
        checks.expect(status == 200 and abstain["chips"] >= 1, "run: the unstable configuration is abstain")
        repeated = [r for r in abstain["reasons"] if r.count("bimodal") > 1]
        checks.expect(any("bimodal" in r for r in abstain["reasons"]) and not repeated,
                      "run: the unstable message is said once %s" % repeated)
        checks.expect(not browser_problems(browser), "abstain run: no console error")
        browser.screenshot(os.path.join(a.out, "run_abstain.png"))
        folded_drawn.append(browser.js(unfold))
        # Quiet configurations stay folded and undrawn until opened.
        checks.expect(True in folded_drawn and False not in folded_drawn,
                      "run: a folded configuration is drawn only when opened %s" % folded_drawn)

        # Hardware comparison with prices: ratios with their intervals, bars from 1.0.
        newest = facts["newest_by_env"]
        envs = facts["envs"]
        prices = "%s:3.72,%s:1.29,%s:0.71" % (envs[0], envs[1], envs[2])
        compare_path = "/compare?runs=%s&prices=%s" % (",".join(newest[e] for e in envs), urllib.parse.quote(prices))
        status = browser.open(base + compare_path)
        cmp = browser.js("""(() => { const c = Chart.getChart(document.querySelector('canvas.compare-chart'));
            return {rows: document.querySelectorAll('table.ratios tbody tr').length,
            cost: [...document.querySelectorAll('table.ratios th')].filter(t => t.textContent.includes('per M')).length,
            bars: c.data.datasets.length,
            from_one: c.data.datasets.every(d => d.data.every(v => v === null || v[0] === 1)),
            whiskers: c.data.datasets.every(d => d.rnxLo.every((lo, i) => lo === null || lo <= d.data[i][1])),
            ratio: document.querySelector('table.ratios tbody tr td:nth-child(5)').textContent}; })()""")
        checks.expect(status == 200, "compare: HTTP 200")
        checks.expect(cmp["rows"] == n_configs, "compare: a ratio row per configuration")
        checks.expect(cmp["cost"] == 3, "compare: cost per million items for each priced environment")
        checks.expect(cmp["bars"] == 2, "compare: a bar series per run compared with the first")
        checks.expect(cmp["from_one"] and cmp["whiskers"], "compare: bars start at 1.0, with interval whiskers")
        checks.expect(re.match(r"^[12]\.\d{3}\u00d7 \(\d\.\d{3}\u2013\d\.\d{3}\)$", cmp["ratio"]) is not None,
                      "compare: the A100 is slower than the H200, with the ratio's interval (%s)" % cmp["ratio"])
        checks.expect(not browser_problems(browser), "compare: no console error %s" % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "compare.png"))

        one_number(browser, checks, a.out, base, block_run, block_decided, unstable_run, unstable_decided,
                   unstable_terminal, twin_run)
        wide_tables(browser, checks, base, [block_run, unstable_run, facts["accepted_run"]])
        pass_run = [r["id"] for r in facts["pr_runs"] if r["verdict"] == "PASS"][0]
        status = browser.open(base + "/runs/" + pass_run)
        folded = browser.js("""[...document.querySelectorAll('details.dist')].filter(d =>
            d.querySelector('.chip.d-equivalent') && d.open).length""")
        checks.expect(status == 200 and folded == 0, "PASS run: its equivalent configurations are folded (%s open)"
                      % folded)
        reasons = browser.js("""[...document.querySelectorAll('table.verdict-table td.reason')]
            .filter(td => !td.textContent.trim()).length""")
        checks.expect(reasons == 0, "PASS run: every row has a reason (%d empty)" % reasons)

        # Bad input: a clear 4xx page with ways back, never 500.
        same_env = facts["runs"][0] + "," + facts["runs"][3]  # runs 0 and 3 share the first environment
        for path, want in [("/projects/nope", 404), ("/runs/99999", 404), ("/runs/abc", 400),
                           ("/projects/demo/configs/" + config + "?points=many", 400),
                           ("/projects/demo/configs/" + config + "?env_id=unknown", 404),
                           ("/projects/demo/configs/" + config + "?from=2001-01-01&to=2026-12-01", 400),
                           ("/compare?runs=1", 400), ("/compare?runs=" + same_env, 400)]:
            status = browser.open(base + path)
            page = browser.js("""({msg: (document.querySelector('.error-message') || {}).textContent || '',
                back: [...document.querySelectorAll('ul.ways-back a')].map(a => a.getAttribute('href'))})""")
            checks.expect(status == want and len(page["msg"]) > 20 and "/" in page["back"],
                          "bad input %s: %s page with a message and a way back (%s)" % (path, want, status))
            checks.expect(not browser_problems(browser, allow_error_status=True), "bad input %s: no script error" % path)
        checks.expect(page["back"][:2] == ["/runs/" + facts["runs"][0], "/runs/" + facts["runs"][3]],
                      "compare of one environment: the error page links to both runs %s" % page["back"])
        browser.screenshot(os.path.join(a.out, "error.png"))

        # A private project: 404 without a token, as an unknown project answers, with a sign-in form naming the
        # right command; the token signs in (cookie), the overview opens and the landing page lists the project.
        status = browser.open(base + "/projects/secret")
        checks.expect(status == 404, "private project: 404 without a token, as an unknown one")
        message = browser.js("document.querySelector('.error-message').textContent")
        checks.expect("rnx-server admin project visibility secret public" in message,
                      "private project: the 404 names the command that makes it public (%s)" % message)
        browser.screenshot(os.path.join(a.out, "sign_in.png"))
        browser.js("document.querySelector('input[name=token]').value = %s; document.querySelector('form').submit();"
                   % json.dumps(secret_token))
        browser.wait_for(lambda e: e.get("method") == "Page.loadEventFired")
        time.sleep(0.2)
        checks.expect(browser.js("location.pathname + ' ' + document.querySelector('h1').textContent")
                      .startswith("/projects/secret secret"), "private project: readable after signing in")
        status = browser.open(base + "/projects/demo")
        checks.expect(status == 200, "a public project stays readable with another project's cookie")
        browser.open(base + "/")
        names = browser.js("[...document.querySelectorAll('table.projects tbody td:first-child a')]"
                           ".map(a => a.textContent)")
        checks.expect(names == ["demo", "empty", "fresh", "secret"],
                      "landing: signed in, the token's private project is listed too (%s)" % names)

        # 400 px wide (a phone): no page scrolls sideways; wide tables scroll inside their own box.
        browser.call("Emulation.setDeviceMetricsOverride", width=400, height=800, deviceScaleFactor=1, mobile=False)
        for path in ["/", "/projects/demo", "/projects/empty", "/projects/demo/configs/" + config,
                     "/runs/" + block_run, "/runs/" + facts["accepted_run"], compare_path, "/projects/nope",
                     "/compare?runs=" + same_env, "/login"]:
            browser.open(base + path)
            wide = browser.js("({fits: %s, scroll: document.documentElement.scrollWidth})" % NO_SIDEWAYS)
            checks.expect(wide["fits"], "400 px: %s does not scroll sideways (%d px)" % (path, wide["scroll"]))
            if path == "/runs/" + block_run:
                browser.screenshot(os.path.join(a.out, "run_400px.png"), width=400)
                browser.call("Emulation.setDeviceMetricsOverride", width=400, height=800, deviceScaleFactor=1,
                             mobile=False)
        browser.call("Emulation.clearDeviceMetricsOverride")
        checks.expect(time.time() - started < DEADLINE_S, "finished within %ds (%.1fs)" % (DEADLINE_S, time.time() - started))
    finally:
        if browser:
            browser.close()
        if server:
            server.terminate()
            server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)
    print("%d checks, %d failed; screenshots in %s" % (checks.count, len(checks.failures), a.out))
    sys.exit(1 if checks.failures else 0)


if __name__ == "__main__":
    main()
