#!/usr/bin/env python3
"""Slowloris bench of rnx-server: ADDRESSES loopback addresses (127.0.0.2, 127.0.0.3, ...) keep IDLE half-sent
requests open between them (reopening each one the server closes), while a client on another address (127.0.0.11)
sends authenticated health checks and pull-request uploads, one at a time, each on a new connection. Prints
p50/p99/max per request kind (over the answered requests) and how many failed, quiet and under attack, as a table,
and writes bench/results/service_slowloris.json.

  bench/service_slowloris.py [--server build/bin/rnx-server] [--before-server OLD] [--addresses 9] [--idle 1000]
                             [--requests 300] [--reopen-interval 1]

--before-server runs the same phases against a second binary first (the server before a change), so both appear
side by side in one table and one JSON. Loopback only; each server is started here on a free port with its default
limits and stopped at the end.
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
CLIENT = "127.0.0.11"  # the client under test: an address no attacker uses
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


def attacker_addresses(n):
    return ["127.0.0.%d" % (2 + i) for i in range(n)]


class Attacker(threading.Thread):
    """Holds `count` half-sent requests spread over `addresses`, reopening those the server closes, until stopped."""

    def __init__(self, port, count, reopen_interval, addresses):
        super().__init__(daemon=True)
        self.port, self.count, self.reopen_interval, self.addresses = port, count, reopen_interval, addresses
        self.stop = threading.Event()
        self.opened = 0
        self.sel = selectors.DefaultSelector()

    def open_one(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.bind((self.addresses[self.opened % len(self.addresses)], 0))
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
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(CLIENT, 0))
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


def phase(server_label, name, port, token, upload_template, n, counter):
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
            if ok:
                times.append(ms)
            bad += 0 if ok else 1
        # Latency of the answered requests only: a refused connection fails in microseconds.
        stat = (lambda q: round(percentile(times, q), 2)) if times else (lambda q: None)
        rows.append({"server": server_label, "phase": name, "kind": kind, "requests": n, "failed": bad,
                     "p50_ms": stat(0.5), "p99_ms": stat(0.99), "max_ms": round(max(times), 2) if times else None})
    return rows


def metric(port, name):
    """A counter from /metrics, or -1 when the server did not answer."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(CLIENT, 0))
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        at = text.find("\n%s " % name)
        return int(float(text[at:].split()[1])) if at >= 0 else 0
    except OSError:
        return -1


def bench_one(label, server, a):
    """The quiet and under-attack phases against one binary: (rows, facts about the attack)."""
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
            rows = phase(label, "quiet", port, token, upload_template, a.requests, counter)
            attacker = Attacker(port, a.idle, a.reopen_interval, attacker_addresses(a.addresses))
            attacker.start()
            while attacker.opened < a.idle and attacker.is_alive():
                time.sleep(0.05)
            time.sleep(a.reopen_interval)  # one reopen pass: the server is full before the first request
            rows += phase(label, "under attack", port, token, upload_template, a.requests, counter)
            facts = {"server": label, "binary": server, "attacker_connection_attempts": attacker.opened,
                     "refused_connections": metric(port, "rnx_refused_connections_total"),
                     "evicted_connections": metric(port, "rnx_evicted_connections_total"),
                     "held_at_end": attacker.held()}
            attacker.stop.set()
            attacker.join(timeout=10)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    return rows, facts


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("RNX_SERVER"))
    p.add_argument("--before-server", help="a second rnx-server binary (before a change) benched first, side by side")
    p.add_argument("--addresses", type=int, default=9, choices=range(1, 10),
                   help="attacker addresses, from 127.0.0.2 on (at most 9: the client is 127.0.0.11)")
    p.add_argument("--idle", type=int, default=1000, help="half-sent requests held open over all attacker addresses")
    p.add_argument("--requests", type=int, default=300, help="requests of each kind per phase")
    p.add_argument("--reopen-interval", type=float, default=1.0,
                   help="seconds between the attacker's passes that reopen every connection the server closed")
    p.add_argument("--out", default=os.path.join(ROOT, "bench/results/service_slowloris.json"))
    a = p.parse_args()
    servers = ([("before", a.before_server)] if a.before_server else []) + [("after" if a.before_server else "server",
                                                                              find_server(a.server))]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, a.idle + 512)), hard))

    rows, facts = [], []
    for label, binary in servers:
        r, f = bench_one(label, binary, a)
        rows += r
        facts.append(f)

    addresses = attacker_addresses(a.addresses)
    print("rnx-server with its default limits; %d half-sent requests kept open from %d addresses (%s-%s), reopened "
          "every %.1f s; client %s, one request at a time, a new connection each; latency over the answered requests"
          % (a.idle, a.addresses, addresses[0], addresses[-1], a.reopen_interval, CLIENT))
    for f in facts:
        print("%s: %d attacker connection attempts, %d refused at once, %d evicted while waiting for a request"
              % (f["server"], f["attacker_connection_attempts"], f["refused_connections"], f["evicted_connections"]))
    show = lambda v: "%9s" % "-" if v is None else "%9.2f" % v
    print("%-7s %-13s %-7s %9s %7s %9s %9s %9s" % ("server", "phase", "kind", "requests", "failed", "p50_ms", "p99_ms",
                                                 "max_ms"))
    for r in rows:
        print("%-7s %-13s %-7s %9d %7d %s %s %s" % (r["server"], r["phase"], r["kind"], r["requests"], r["failed"],
                                                   show(r["p50_ms"]), show(r["p99_ms"]), show(r["max_ms"])))
    with open(a.out, "w") as f:
        json.dump({"idle_half_open": a.idle, "attacker_addresses": addresses, "client_address": CLIENT,
                   "reopen_interval_s": a.reopen_interval, "servers": facts, "rows": rows}, f, indent=1)
    print("wrote", os.path.relpath(a.out, ROOT))
    under = [r for r in rows if r["phase"] == "under attack" and r["server"] != "before"]
    return 0 if all(r["failed"] == 0 for r in under) else 1


if __name__ == "__main__":
    sys.exit(main())
