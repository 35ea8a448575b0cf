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

    def screenshot(self, path):
        height = self.js("Math.ceil(document.documentElement.scrollHeight)")
        self.call("Emulation.setDeviceMetricsOverride", width=1360, height=min(max(height, 600), 4000),
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


def main():
    started = time.time()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="the rnx-server binary")
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

        def admin(*args):
            return subprocess.run([a.server, "admin", *args, "--db", db], check=True, capture_output=True,
                                  text=True).stdout.strip()

        admin("project", "create", "demo")
        admin("project", "create", "secret")
        token = admin("token", "create", "--project", "demo", "--scope", "admin")
        secret_token = admin("token", "create", "--project", "secret", "--scope", "admin")
        admin("project", "visibility", "demo", "public")
        server = subprocess.Popen([a.server, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = server.stdout.readline()
        if "listening on" not in line:
            sys.exit("browser_pages: rnx-server did not start: " + line)
        base = line.split("listening on ")[1].split(" ")[0]
        facts = pages_seed.seed(base, token, "demo", runs=45, n_kernels=2, batches=(1, 8), envs=3, samples=40)
        pages_seed.seed(base, secret_token, "secret", runs=3, n_kernels=1, batches=(1,), envs=1, samples=20)
        print("seeded %d runs in %.1fs" % (len(facts["runs"]), time.time() - started))

        browser = Browser(work)
        n_configs = len(facts["configs"])

        # Project overview.
        status = browser.open(base + "/projects/demo")
        checks.expect(status == 200, "overview: HTTP 200 (got %s)" % status)
        dom = browser.js("""({h1: document.querySelector('h1').textContent,
            rows: document.querySelectorAll('table.configs tr.config-row').length,
            envs: document.querySelectorAll('table.envs tbody tr').length,
            sparks: document.querySelectorAll('svg.spark polyline').length,
            trends: document.querySelectorAll('td.trend.t-slower, td.trend.t-faster, td.trend.t-flat').length,
            chips: document.querySelectorAll('table.configs .chip').length,
            verdicts: document.querySelectorAll('table.verdicts tbody tr').length,
            compare: !!document.querySelector('a[href^="/compare?runs="]')})""")
        checks.expect(dom["h1"].startswith("demo"), "overview: heading names the project")
        checks.expect(dom["rows"] == n_configs * 3, "overview: a row per configuration and environment (%d)" % dom["rows"])
        checks.expect(dom["envs"] == 3, "overview: three environments listed")
        checks.expect(dom["sparks"] == n_configs * 3, "overview: a sparkline per series (%d)" % dom["sparks"])
        checks.expect(dom["trends"] >= n_configs, "overview: trend arrows drawn (%d)" % dom["trends"])
        checks.expect(dom["chips"] > 0 and dom["verdicts"] > 0, "overview: last verdicts shown")
        checks.expect(dom["compare"], "overview: links to the hardware comparison")
        checks.expect(not browser_problems(browser), "overview: no console error, no outside request %s"
                      % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "overview.png"))

        # Configuration history: log scale, one series per environment, the accepted slowdown marked, click-through.
        config = urllib.parse.quote(facts["configs"][0], safe="")
        status = browser.open(base + "/projects/demo/configs/" + config + "?scale=log")
        checks.expect(status == 200, "history: HTTP 200 (got %s)" % status)
        chart = browser.js("""(() => { const c = Chart.getChart(document.querySelector('canvas.history-chart'));
            return {scale: c.scales.y.type, series: c.data.datasets.length,
                    points: c.data.datasets.reduce((n, d) => n + d.data.length, 0),
                    triangles: c.data.datasets.reduce((n, d) => n + d.pointStyle.filter(s => s === 'triangle').length, 0),
                    diamonds: c.data.datasets.reduce((n, d) => n + d.pointStyle.filter(s => s === 'rectRot').length, 0),
                    reason: document.querySelector('table.accepted td:last-child').textContent,
                    bold: document.querySelectorAll('table.accepted b').length}; })()""")
        checks.expect(chart["scale"] == "logarithmic", "history: log scale on request")
        checks.expect(chart["series"] == 3, "history: one series per environment")
        checks.expect(chart["points"] >= 40, "history: every run drawn (%d points)" % chart["points"])
        checks.expect(chart["triangles"] == 1, "history: the accepted slowdown marked once")
        checks.expect(chart["diamonds"] > 10, "history: baselines marked")
        checks.expect("<b>15%</b>" in chart["reason"] and chart["bold"] == 0,
                      "history: the accepted reason shown as text, its markup escaped")
        checks.expect(not browser_problems(browser), "history: no console error, no outside request %s"
                      % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "history.png"))
        # Click the first point of the first series: the browser must open that run's page.
        target = browser.js("""(() => { const c = Chart.getChart(document.querySelector('canvas.history-chart'));
            const el = c.getDatasetMeta(0).data[0]; const r = c.canvas.getBoundingClientRect();
            return {x: r.left + el.x, y: r.top + el.y, run: c.data.datasets[0].data[0].run}; })()""")
        browser.events = []
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            browser.call("Input.dispatchMouseEvent", type=kind, x=target["x"], y=target["y"], button="left",
                         clickCount=1)
        browser.wait_for(lambda e: e.get("method") == "Page.loadEventFired")
        checks.expect(browser.js("location.pathname") == "/runs/" + target["run"],
                      "history: clicking a point opens run %s" % target["run"])

        # Run page of the accepted slowdown: verdict table, strip charts of base and head per worker process.
        status = browser.open(base + "/runs/" + facts["accepted_run"])
        checks.expect(status == 200, "run: HTTP 200")
        run = browser.js("""({rows: document.querySelectorAll('table.verdict-table tbody tr').length,
            slower: document.querySelectorAll('table.verdict-table .chip.d-slower').length,
            banner: document.querySelector('.banner').textContent,
            charts: [...document.querySelectorAll('details.dist[open] canvas')].filter(c => Chart.getChart(c)).length,
            open: document.querySelectorAll('details.dist[open]').length,
            sides: (() => { const c = Chart.getChart(document.querySelector('details.dist[open] canvas'));
                            return c.data.datasets.map(d => d.label).join(','); })()})""")
        checks.expect(run["rows"] == n_configs, "run: a verdict row per configuration (%d)" % run["rows"])
        checks.expect(run["slower"] >= 1, "run: the slowdown is called slower")
        checks.expect(run["banner"].startswith("BLOCK"), "run: the BLOCK verdict is shown")
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

        # Run page of the abstain.
        status = browser.open(base + "/runs/" + facts["abstain_run"])
        abstain = browser.js("document.querySelectorAll('table.verdict-table .chip.d-abstain').length")
        checks.expect(status == 200 and abstain >= 1, "run: the unstable configuration is abstain")
        checks.expect(not browser_problems(browser), "abstain run: no console error")
        browser.screenshot(os.path.join(a.out, "run_abstain.png"))
        folded_drawn.append(browser.js(unfold))
        # Quiet configurations stay folded and undrawn until opened.
        checks.expect(True in folded_drawn and False not in folded_drawn,
                      "run: a folded configuration is drawn only when opened %s" % folded_drawn)

        # Hardware comparison with prices.
        newest = facts["newest_by_env"]
        envs = facts["envs"]
        prices = "%s:3.72,%s:1.29,%s:0.71" % (envs[0], envs[1], envs[2])
        status = browser.open(base + "/compare?runs=%s&prices=%s" % (",".join(newest[e] for e in envs),
                                                                      urllib.parse.quote(prices)))
        cmp = browser.js("""({rows: document.querySelectorAll('table.ratios tbody tr').length,
            cost: [...document.querySelectorAll('table.ratios th')].filter(t => t.textContent.includes('per M')).length,
            bars: Chart.getChart(document.querySelector('canvas.compare-chart')).data.datasets.length,
            ratio: document.querySelector('table.ratios tbody tr td:nth-child(5)').textContent})""")
        checks.expect(status == 200, "compare: HTTP 200")
        checks.expect(cmp["rows"] == n_configs, "compare: a ratio row per configuration")
        checks.expect(cmp["cost"] == 3, "compare: cost per million items for each priced environment")
        checks.expect(cmp["bars"] == 3, "compare: a bar series per run")
        checks.expect(cmp["ratio"].startswith("1.") or cmp["ratio"].startswith("2."),
                      "compare: the A100 is slower than the H200 (%s)" % cmp["ratio"])
        checks.expect(not browser_problems(browser), "compare: no console error %s" % browser_problems(browser))
        browser.screenshot(os.path.join(a.out, "compare.png"))

        # Bad input: a clear 4xx page, never 500.
        for path, want in [("/projects/nope", 404), ("/runs/99999", 404), ("/runs/abc", 400),
                           ("/projects/demo/configs/" + config + "?points=many", 400),
                           ("/projects/demo/configs/" + config + "?env_id=unknown", 404),
                           ("/projects/demo/configs/" + config + "?from=2001-01-01&to=2026-12-01", 400),
                           ("/compare?runs=1", 400)]:
            status = browser.open(base + path)
            msg = browser.js("(document.querySelector('.error-message') || {}).textContent || ''")
            checks.expect(status == want and len(msg) > 20, "bad input %s: %s page with a message (%s)" % (path, want, status))
            checks.expect(not browser_problems(browser, allow_error_status=True), "bad input %s: no script error" % path)
        browser.screenshot(os.path.join(a.out, "error.png"))

        # A private project: 401 with a sign-in form; the token signs in (cookie) and the overview opens.
        status = browser.open(base + "/projects/secret")
        checks.expect(status == 401, "private project: 401 without a token")
        browser.screenshot(os.path.join(a.out, "sign_in.png"))
        browser.js("document.querySelector('input[name=token]').value = %s; document.querySelector('form').submit();"
                   % json.dumps(secret_token))
        browser.wait_for(lambda e: e.get("method") == "Page.loadEventFired")
        time.sleep(0.2)
        checks.expect(browser.js("location.pathname + ' ' + document.querySelector('h1').textContent")
                      .startswith("/projects/secret secret"), "private project: readable after signing in")
        status = browser.open(base + "/projects/demo")
        checks.expect(status == 200, "a public project stays readable with another project's cookie")
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
