#!/usr/bin/env python3
"""Change points on the history page, in a real browser: rnx-server on 127.0.0.1, 20 push runs of main with a 10%
step in softmax at the 13th (uploaded through the API, so the server's own scan finds it), then headless Chromium
opens the configuration's history page and checks the change-point table and the dashed marker the chart drew.

  python3 tests/service/browser_changes.py --server build/bin/rnx-server --out build/browser_changes
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pages_seed  # noqa: E402
from browser_pages import CHROMIUM, Browser, Checks, browser_problems, server_admin  # noqa: E402

STEP_AT = 12
RUNS = 20


def upload_history(base, token):
    """20 push runs of main in one environment; softmax 10% slower from run STEP_AT on. Returns the run ids."""
    rng = random.Random(24)
    client = pages_seed.Client(base, token)
    cfgs = pages_seed.configs(1, [1])  # softmax, eager and compile, batch 1
    env = pages_seed.ENVIRONMENTS[0]
    when = datetime(2026, 11, 1, 8, 0, tzinfo=timezone.utc)
    ids = []
    for i in range(RUNS):
        when += timedelta(hours=6)
        level = {"softmax": 1.10 if i >= STEP_AT else 1.0}
        doc = pages_seed.document("demo", env, when, "%040x" % (0xc0ffee00 + i), "main", None, cfgs, level, rng,
                                  samples=40, processes=5)
        ids.append(client.post("/api/v1/runs", doc)["id"])
    return ids, ["%s/%s/float32/b%d" % c for c in cfgs]


def wait_for_changes(base, config, timeout=60):
    """The server scans after each push run on its background thread: waits until the history page's JSON has a
    change point for `config`."""
    end = time.time() + timeout
    changes = []
    while time.time() < end:
        url = base + "/api/v1/projects/demo/configs/" + urllib.parse.quote(config, safe="") + "/history"
        changes = json.load(urllib.request.urlopen(url, timeout=10)).get("changes", [])
        if changes:
            return changes
        time.sleep(0.2)
    return changes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--server", required=True, help="the rnx-server binary")
    ap.add_argument("--out", required=True, help="folder for the screenshot")
    a = ap.parse_args()
    if not os.path.exists(CHROMIUM):
        sys.exit("browser_changes: %s not found: install the Debian package chromium (scripts/setup.sh)" % CHROMIUM)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="rnx-browser-changes-")
    server = None
    browser = None
    checks = Checks()
    try:
        db = os.path.join(work, "rnx.sqlite")
        admin = server_admin(a.server, db)

        admin("project", "create", "demo")
        token = admin("token", "create", "--project", "demo", "--scope", "admin")
        admin("project", "visibility", "demo", "public")
        server = subprocess.Popen([a.server, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "2"],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = server.stdout.readline()
        if "listening on" not in line:
            sys.exit("browser_changes: rnx-server did not start: " + line)
        base = line.split("listening on ")[1].split(" ")[0]
        ids, configs = upload_history(base, token)
        changes = wait_for_changes(base, configs[0])
        checks.expect(len(changes) == 1, "history JSON: one change point for %s (got %d)" % (configs[0], len(changes)))
        checks.expect(all(c["run_id"] == ids[STEP_AT] for c in changes),
                      "history JSON: it starts at the run of the step (%s)" % [c["run_id"] for c in changes])

        browser = Browser(work)
        status = browser.open(base + "/projects/demo/configs/" + urllib.parse.quote(configs[0], safe=""))
        checks.expect(status == 200, "history page: HTTP 200 (got %s)" % status)
        page = browser.js("""new Promise(done => setTimeout(() => {
            const canvas = document.querySelector('canvas.history-chart');
            const rows = [...document.querySelectorAll('table.changes tbody tr')];
            done({markers: canvas && canvas.getAttribute('data-change-markers'),
                  rows: rows.length,
                  slower: rows.filter(r => r.classList.contains('slower')).length,
                  run: rows.length ? rows[0].querySelector('a').textContent : null,
                  ratio: rows.length ? parseFloat(rows[0].querySelectorAll('td')[5].textContent) : null,
                  chart: !!(canvas && Chart.getChart(canvas))});
        }, 300))""")
        checks.expect(page["chart"], "history page: the chart is drawn")
        checks.expect(page["markers"] == "1", "history page: one change-point marker on the chart (got %s)" %
                      page["markers"])
        checks.expect(page["rows"] == 1 and page["slower"] == 1,
                      "history page: one 'slower' row in the change-point table (got %s)" % page)
        checks.expect(page["run"] == ids[STEP_AT], "history page: the row links the first run after the step")
        checks.expect(page["ratio"] is not None and 1.08 < page["ratio"] < 1.12,
                      "history page: its ratio is about 1.10 (got %s)" % page["ratio"])
        browser.screenshot(os.path.join(a.out, "history_changes.png"))
        # Chromium asks for /favicon.ico on its own, and the server has none: that 404 is the only one allowed.
        problems = browser_problems(browser, allow_error_status=True)
        problems += ["HTTP %d: %s" % (e["params"]["response"]["status"], e["params"]["response"]["url"])
                     for e in browser.events if e.get("method") == "Network.responseReceived"
                     and e["params"]["response"]["status"] >= 400
                     and not e["params"]["response"]["url"].endswith("/favicon.ico")]
        checks.expect(not problems, "history page: no console error, exception or outside request %s" % problems)
    finally:
        if browser:
            browser.close()
        if server:
            server.terminate()
            server.wait(timeout=10)
    print("%d checks, %d failed" % (checks.count, len(checks.failures)))
    return 1 if checks.failures else 0


if __name__ == "__main__":
    sys.exit(main())
