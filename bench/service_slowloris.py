#!/usr/bin/env python3
"""Slowloris bench of rnx-server: one address (127.0.0.2) keeps IDLE half-sent requests open (reopening each one
the server closes), while another client (127.0.0.1) sends authenticated health checks and pull-request uploads,
one at a time, each on a new connection. Prints p50/p99/max per request kind, quiet and under attack, as a table,
and writes bench/results/service_slowloris.json.

  bench/service_slowloris.py [--server build/bin/rnx-server] [--idle 1000] [--requests 300] [--reopen-interval 1]

Loopback only; the server is started here on a free port with its default limits and stopped at the end.
"""
import argparse
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ATTACKER = "127.0.0.2"
PARTIAL = b"POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"


def find_server(given):
    for candidate in ([given] if given else []) + [os.path.join(ROOT, "build-service/bin/rnx-server"),
                                                   os.path.join(ROOT, "build/bin/rnx-server")]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("rnx-server not found: build it (ninja -C build rnx-server) or pass --server")


def admin(server, db, *args):
    return subprocess.run([server, "admin", *args, "--db", db], check=True, capture_output=True, text=True).stdout


def start(server, db, log):
    proc = subprocess.Popen([server, "serve", "--db", db, "--listen", "127.0.0.1:0"], stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log.name) as f:
            text = f.read()
        if "listening on" in text:
            port = int(text.split("127.0.0.1:")[1].split()[0])
            return proc, port
        time.sleep(0.05)
    proc.kill()
    sys.exit("rnx-server did not start:\n" + open(log.name).read())


class Attacker(threading.Thread):
    """Holds `count` half-sent requests from ATTACKER, reopening those the server closes, until stopped."""

    def __init__(self, port, count, reopen_interval):
        super().__init__(daemon=True)
        self.port, self.count, self.reopen_interval = port, count, reopen_interval
        self.stop = threading.Event()
        self.opened = 0
        self.sel = selectors.DefaultSelector()

    def open_one(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.bind((ATTACKER, 0))
            s.connect(("127.0.0.1", self.port))
            s.sendall(PARTIAL)
        except OSError:
            s.close()
            return
        s.setblocking(False)
        self.sel.register(s, selectors.EVENT_READ)
        self.opened += 1

    def run(self):
        for _ in range(self.count):
            self.open_one()
        last_pass = time.monotonic()
        while not self.stop.is_set():
            for key, _ in self.sel.select(timeout=0.05):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:  # closed by the server
                    self.sel.unregister(s)
                    s.close()
            # Every reopen_interval, back to `count` open, as a slowloris client does.
            if time.monotonic() - last_pass >= self.reopen_interval:
                last_pass = time.monotonic()
                for _ in range(max(0, self.count - len(self.sel.get_map()))):
                    if self.stop.is_set():
                        break
                    self.open_one()
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()

    def held(self):
        return len(self.sel.get_map())


def timed(port, method, path, token, body=None):
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    try:
        conn.request(method, path, body=body, headers=headers)
        status = conn.getresponse().status
    except OSError:
        status = 0
    finally:
        conn.close()
    return (time.perf_counter() - start) * 1e3, status


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]


def phase(name, port, token, upload_template, n, counter):
    rows = []
    for kind in ("health", "upload"):
        times, bad = [], 0
        for _ in range(n):
            if kind == "health":
                ms, status = timed(port, "GET", "/healthz", token)
                ok = status == 200
            else:
                counter[0] += 1
                body = upload_template.replace("__COMMIT__", "c%06d" % counter[0]).encode()
                ms, status = timed(port, "POST", "/api/v1/runs", token, body)
                ok = status == 201
            times.append(ms)
            bad += 0 if ok else 1
        rows.append({"phase": name, "kind": kind, "requests": n, "failed": bad,
                     "p50_ms": round(percentile(times, 0.5), 2), "p99_ms": round(percentile(times, 0.99), 2),
                     "max_ms": round(max(times), 2)})
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("RNX_SERVER"))
    p.add_argument("--idle", type=int, default=1000, help="half-sent requests held open from 127.0.0.2")
    p.add_argument("--requests", type=int, default=300, help="requests of each kind per phase")
    p.add_argument("--reopen-interval", type=float, default=1.0,
                   help="seconds between the attacker's passes that reopen every connection the server closed")
    a = p.parse_args()
    server = find_server(a.server)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.idle + 512)), hard))

    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "rnx.sqlite")
        admin(server, db, "project", "create", "bench")
        token = admin(server, db, "token", "create", "--project", "bench", "--scope", "upload").strip().splitlines()[-1]
        upload_template = subprocess.run(
            [sys.executable, os.path.join(ROOT, "bench/service_make_run.py"), "--branch", "feature",
             "--pull-request", "8", "--commit", "__COMMIT__"], check=True, capture_output=True, text=True).stdout
        log = open(os.path.join(work, "server.log"), "w")
        proc, port = start(server, db, log)
        counter = [0]
        try:
            rows = phase("quiet", port, token, upload_template, a.requests, counter)
            attacker = Attacker(port, a.idle, a.reopen_interval)
            attacker.start()
            while attacker.opened < a.idle and attacker.is_alive():
                time.sleep(0.05)
            rows += phase("under attack", port, token, upload_template, a.requests, counter)
            try:
                metrics = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                metrics.request("GET", "/metrics")
                text = metrics.getresponse().read().decode()
                refused = int(float(text.split("\nrnx_refused_connections_total ")[1].split()[0]))
            except OSError:
                refused = -1  # the server did not answer /metrics either
            held = attacker.held()
            attacker.stop.set()
            attacker.join(timeout=10)
        finally:
            proc.terminate()
            proc.wait(timeout=20)

    print("rnx-server with its default limits; %d half-sent requests kept open from %s, reopened every %.1f s "
          "(%d connection attempts, %d refused at once by the per-address limit); client 127.0.0.1, one request at "
          "a time, a new connection each" % (a.idle, ATTACKER, a.reopen_interval, attacker.opened, refused))
    print("%-13s %-7s %9s %7s %9s %9s %9s" % ("phase", "kind", "requests", "failed", "p50_ms", "p99_ms", "max_ms"))
    for r in rows:
        print("%-13s %-7s %9d %7d %9.2f %9.2f %9.2f" % (r["phase"], r["kind"], r["requests"], r["failed"],
                                                       r["p50_ms"], r["p99_ms"], r["max_ms"]))
    out = os.path.join(ROOT, "bench/results/service_slowloris.json")
    with open(out, "w") as f:
        json.dump({"idle_half_open": a.idle, "reopen_interval_s": a.reopen_interval,
                   "attacker_connection_attempts": attacker.opened,
                   "refused_connections": refused, "held_at_end": held, "rows": rows}, f, indent=1)
    print("wrote", os.path.relpath(out, ROOT))
    under = [r for r in rows if r["phase"] == "under attack"]
    return 0 if all(r["failed"] == 0 for r in under) else 1


if __name__ == "__main__":
    sys.exit(main())
