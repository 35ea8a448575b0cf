#!/usr/bin/env python3
"""Token-holder flood bench of rnx-server (issue 45): CONNECTIONS keep-alive connections spread over ADDRESSES
loopback addresses (127.0.0.2, 127.0.0.3, ...) each send a request with one project's valid upload token, then one
every INTERVAL seconds, reopening every connection the server closes (once a second); halfway through, the token is
revoked with `rnx-server admin token revoke` and the flood goes on with it. Meanwhile two probes, each a new connection
every PROBE_GAP seconds from an address of its own: GET /healthz without a token (127.0.0.200) and another project's
client asking who its token is (127.0.0.201). A probe is served when it gets 200 within 1 s.

Prints, per phase (token valid / token revoked), how many probes were served within 1 s, their p50/p99/max, what
the flood's requests got, and for every connection held open when the token was revoked how long after its next
request the server closed it; writes bench/results/service_flood.json. Exit status 0 when both probes were served
>= 99% within 1 s throughout and every revoked connection was closed within 1 s of its next request.

  bench/service_flood.py [--server build-svc/bin/rnx-server] [--connections 512] [--addresses 8] [--interval 4]
                         [--duration 40] [--probe-gap 0.05] [--extra "--max-connections-per-token 32"]

Loopback only. The server is started here on a free port with its default limits (plus --extra) and stopped at the
end; the run ends by itself after --duration seconds.
"""
import argparse
import http.client
import json
import multiprocessing
import os
import resource
import selectors
import shlex
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEALTH_PROBE = "127.0.0.200"
OTHER_CLIENT = "127.0.0.201"
SERVED_WITHIN_S = 1.0


def find_server(given):
    for candidate in ([given] if given else []) + [os.path.join(ROOT, p, "bin/rnx-server")
                                                   for p in ("build-svc", "build-service", "build")]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("rnx-server not found: build it (cmake --build build-svc --target rnx-server) or pass --server")


def admin(server, db, *args):
    return subprocess.run([server, "admin", *args, "--db", db], check=True, capture_output=True, text=True).stdout


def start(server, db, log, extra):
    proc = subprocess.Popen([server, "serve", "--db", db, "--listen", "127.0.0.1:0", *extra], stdout=log,
                            stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(log.name) as f:
            text = f.read()
        if "listening on" in text:
            return proc, int(text.split("127.0.0.1:")[1].split()[0])
        time.sleep(0.05)
    proc.kill()
    sys.exit("rnx-server did not start:\n" + open(log.name).read())


class Conn:
    __slots__ = ("sock", "address", "next_send", "sent_at", "pending", "first_send_after_revoke", "buf", "held")

    def __init__(self, sock, address):
        self.sock, self.address = sock, address
        self.next_send = 0.0
        self.sent_at = None
        self.pending = False
        self.first_send_after_revoke = None
        self.buf = b""
        self.held = False  # answered 200 with the token while it was valid: a connection the server kept open


class Flood(threading.Thread):
    """The token holder: `count` keep-alive connections over `addresses`, a request each every `interval` s."""

    def __init__(self, port, token, project, count, addresses, interval):
        super().__init__(daemon=True)
        self.port, self.count, self.addresses, self.interval = port, count, addresses, interval
        self.request = ("GET /api/v1/projects/%s/token HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
                        % (project, token)).encode()
        self.stop = threading.Event()
        self.sel = selectors.DefaultSelector()
        self.revoked_at = None      # set by the main thread
        self.open_at_revoke = None  # connections open when the token was revoked: {id(conn): conn}
        self.close_delays = []      # for those: (seconds from their first request after revocation to the close, held)
        self.not_closed = 0         # those still open at the end although they sent a request after revocation
        self.statuses = {"valid": {}, "revoked": {}}
        self.opened = 0
        self.open_failures = 0
        self.max_open = 0
        self.lock = threading.Lock()

    def phase(self):
        return "revoked" if self.revoked_at is not None else "valid"

    def open_one(self):
        address = self.addresses[self.opened % len(self.addresses)]
        self.opened += 1
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.bind((address, 0))
            s.connect(("127.0.0.1", self.port))
        except OSError:
            s.close()
            self.open_failures += 1
            return
        s.setblocking(False)
        c = Conn(s, address)
        c.next_send = time.monotonic()
        self.sel.register(s, selectors.EVENT_READ, c)

    def closed(self, c, now):
        self.sel.unregister(c.sock)
        c.sock.close()
        with self.lock:
            if self.open_at_revoke is not None and id(c) in self.open_at_revoke:
                del self.open_at_revoke[id(c)]
                if c.first_send_after_revoke is not None:
                    self.close_delays.append((now - c.first_send_after_revoke, c.held))

    def count_status(self, status):
        bucket = self.statuses[self.phase()]
        bucket[status] = bucket.get(status, 0) + 1

    def send(self, c, now):
        try:
            c.sock.send(self.request)
        except OSError:
            return self.closed(c, now)
        c.pending, c.sent_at = True, now
        with self.lock:
            if (self.open_at_revoke is not None and id(c) in self.open_at_revoke and c.first_send_after_revoke is None):
                c.first_send_after_revoke = now

    def run(self):
        for _ in range(self.count):
            self.open_one()
        last_reopen = time.monotonic()
        while not self.stop.is_set():
            now = time.monotonic()
            for key, _ in self.sel.select(timeout=0.01):
                c = key.data
                try:
                    data = c.sock.recv(65536)
                except OSError:
                    data = b""
                now = time.monotonic()
                if not data:
                    self.closed(c, now)
                    continue
                c.buf += data
                # Responses are small and one at a time: a status line and a body with Content-Length.
                while b"\r\n\r\n" in c.buf:
                    head, rest = c.buf.split(b"\r\n\r\n", 1)
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        if line.lower().startswith(b"content-length:"):
                            length = int(line.split(b":", 1)[1])
                    if len(rest) < length:
                        break
                    status = int(head.split(b" ", 2)[1])
                    self.count_status(status)
                    if status == 200 and self.revoked_at is None:
                        c.held = True
                    c.buf = rest[length:]
                    c.pending = False
                    c.next_send = c.sent_at + self.interval
            now = time.monotonic()
            for key in list(self.sel.get_map().values()):
                c = key.data
                if not c.pending and now >= c.next_send:
                    self.send(c, now)
            self.max_open = max(self.max_open, len(self.sel.get_map()))
            if now - last_reopen >= 1.0:
                last_reopen = now
                for _ in range(max(0, self.count - len(self.sel.get_map()))):
                    self.open_one()
        with self.lock:
            self.not_closed = sum(1 for c in (self.open_at_revoke or {}).values() if c.first_send_after_revoke)
        for key in list(self.sel.get_map().values()):
            key.data.sock.close()

    def mark_revoked(self):
        with self.lock:
            self.open_at_revoke = {id(k.data): k.data for k in list(self.sel.get_map().values())}
            self.revoked_at = time.monotonic()


def flood_process(pipe, port, token, project, count, addresses, interval, nofile):
    """The flood in a process of its own, so that its bursts never hold up the probes (one interpreter lock each).
    Told over `pipe`: "revoked" (the token was revoked now), "stop" (answers with what it saw)."""
    resource.setrlimit(resource.RLIMIT_NOFILE, nofile)
    flood = Flood(port, token, project, count, addresses, interval)
    flood.start()
    while flood.opened < count and flood.is_alive():
        time.sleep(0.05)
    pipe.send("ready")
    while True:
        message = pipe.recv()
        if message == "revoked":
            flood.mark_revoked()
        elif message == "stop":
            break
    flood.stop.set()
    flood.join(timeout=30)
    pipe.send({"opened": flood.opened, "open_failures": flood.open_failures, "max_open": flood.max_open,
               "statuses": flood.statuses, "close_delays": flood.close_delays, "not_closed": flood.not_closed})


def probe(port, source, path, token):
    """One request on a new connection: (served within 1 s, seconds, status)."""
    start = time.perf_counter()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=SERVED_WITHIN_S, source_address=(source, 0))
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        conn.request("GET", path, headers=headers)
        r = conn.getresponse()
        r.read()
        status = r.status
    except socket.timeout:
        status = "timeout"  # no answer within 1 s
    except ConnectionResetError:
        status = "reset"
    except ConnectionRefusedError:
        status = "refused"
    except (OSError, http.client.HTTPException) as e:
        status = type(e).__name__  # e.g. RemoteDisconnected: closed without an answer (evicted)
    finally:
        conn.close()
    seconds = time.perf_counter() - start
    return status == 200 and seconds <= SERVED_WITHIN_S, seconds, status


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))] if v else None


def summarize(samples):
    times = [s for ok, s, _ in samples if ok]
    served = sum(1 for ok, _, _ in samples if ok)
    ms = lambda v: None if v is None else round(v * 1e3, 2)
    return {"probes": len(samples), "served_within_1s": served,
            "served_pct": round(100.0 * served / len(samples), 2) if samples else None,
            "p50_ms": ms(percentile(times, 0.5)), "p99_ms": ms(percentile(times, 0.99)),
            "max_ms": ms(max(times) if times else None),
            "statuses": {str(k): sum(1 for _, _, st in samples if st == k)
                         for k in sorted({st for *_, st in samples}, key=str)}}


def metric(port, name, token):
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5, source_address=(OTHER_CLIENT, 0))
        conn.request("GET", "/metrics", headers={"Authorization": "Bearer " + token})
        text = conn.getresponse().read().decode()
        at = text.find("\n%s " % name)
        return int(float(text[at:].split()[1])) if at >= 0 else 0
    except OSError:
        return -1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--server", default=os.environ.get("RNX_SERVER"))
    p.add_argument("--connections", type=int, default=512, help="the flood's keep-alive connections")
    p.add_argument("--addresses", type=int, default=8, choices=range(1, 190),
                   help="the flood's loopback addresses, from 127.0.0.2 on")
    p.add_argument("--interval", type=float, default=4.0, help="seconds between a flood connection's requests")
    p.add_argument("--duration", type=float, default=40.0, help="seconds of probes; the token is revoked halfway")
    p.add_argument("--probe-gap", type=float, default=0.05, help="seconds between one probe's requests")
    p.add_argument("--extra", default="", help="more rnx-server serve flags, e.g. \"--idle-timeout 5\"")
    p.add_argument("--out", default=os.path.join(ROOT, "bench/results/service_flood.json"))
    a = p.parse_args()
    server = find_server(a.server)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 4 * a.connections + 1024)), hard))
    addresses = ["127.0.0.%d" % (2 + i) for i in range(a.addresses)]

    with tempfile.TemporaryDirectory() as work:
        db = os.path.join(work, "rnx.sqlite")
        for project in ("flood", "other"):
            admin(server, db, "project", "create", project)
        token_of = lambda project: admin(server, db, "token", "create", "--project", project, "--scope",
                                         "upload").strip().splitlines()[-1]
        flood_token, other_token = token_of("flood"), token_of("other")
        log = open(os.path.join(work, "server.log"), "w")
        proc, port = start(server, db, log, shlex.split(a.extra))
        try:
            ours, theirs = multiprocessing.Pipe()
            flood_proc = multiprocessing.Process(
                target=flood_process, args=(theirs, port, flood_token, "flood", a.connections, addresses, a.interval,
                                            resource.getrlimit(resource.RLIMIT_NOFILE)))
            flood_proc.start()
            # The flood is established (every connection opened and its first request sent) before probing.
            if not ours.poll(120) or ours.recv() != "ready":
                sys.exit("the flood did not start")
            time.sleep(1.0)
            samples = {"valid": {"health": [], "other": []}, "revoked": {"health": [], "other": []}}
            begin = time.monotonic()
            revoked = False
            while time.monotonic() - begin < a.duration:
                if not revoked and time.monotonic() - begin >= a.duration / 2:
                    # Marked once the revocation is committed: a request before it was still answered.
                    admin(server, db, "token", "revoke", flood_token)
                    ours.send("revoked")
                    revoked = True
                phase = "revoked" if revoked else "valid"
                samples[phase]["health"].append(probe(port, HEALTH_PROBE, "/healthz", None))
                samples[phase]["other"].append(probe(port, OTHER_CLIENT, "/api/v1/projects/other/token", other_token))
                time.sleep(a.probe_gap)
            # Long enough for every connection open at revocation to send its next request and see it closed.
            time.sleep(a.interval + 1.5)
            ours.send("stop")
            flood = ours.recv() if ours.poll(60) else sys.exit("the flood did not stop")
            flood_proc.join(timeout=30)
            facts = {name: metric(port, name, other_token) for name in (
                "rnx_refused_connections_total", "rnx_evicted_connections_total",
                "rnx_idle_closed_connections_total", "rnx_open_connections")}
        finally:
            proc.terminate()
            proc.wait(timeout=20)

    rows = []
    for phase in ("valid", "revoked"):
        for kind in ("health", "other"):
            rows.append({"phase": "token " + phase, "probe": kind, **summarize(samples[phase][kind])})
    def closing(delays):
        delays = sorted(delays)
        return {"closed_after_next_request": len(delays), "closed_within_1s": sum(1 for d in delays if d <= 1.0),
                "max_close_delay_ms": round(delays[-1] * 1e3, 2) if delays else None,
                "p50_close_delay_ms": round(percentile(delays, 0.5) * 1e3, 2) if delays else None}
    delays = [d for d, _ in flood["close_delays"]]
    revoke = {"connections_open_at_revoke": len(delays) + flood["not_closed"], "not_closed": flood["not_closed"],
              **closing(delays), "held": closing([d for d, held in flood["close_delays"] if held])}
    result = {"server": server, "flags": a.extra, "connections": a.connections, "addresses": addresses,
              "interval_s": a.interval, "duration_s": a.duration, "probe_gap_s": a.probe_gap,
              "flood_connection_attempts": flood["opened"], "flood_open_failures": flood["open_failures"],
              "flood_max_open": flood["max_open"], "flood_statuses": flood["statuses"], "server_counters": facts,
              "rows": rows, "revocation": revoke}

    print("rnx-server %s; flood: %d keep-alive connections from %d addresses (%s-%s), a request with one upload token "
          "every %.0f s, closed ones reopened every second; token revoked after %.0f s of %.0f"
          % (a.extra or "(defaults)", a.connections, a.addresses, addresses[0], addresses[-1], a.interval,
             a.duration / 2, a.duration))
    print("flood: %d connection attempts, at most %d open at once; answers while valid %s, after revocation %s"
          % (flood["opened"], flood["max_open"], flood["statuses"]["valid"], flood["statuses"]["revoked"]))
    print("server: %s" % ", ".join("%s %d" % kv for kv in facts.items()))
    show = lambda v: "%9s" % "-" if v is None else "%9.2f" % v
    print("%-14s %-7s %7s %9s %8s %9s %9s %9s" % ("phase", "probe", "probes", "served", "pct", "p50_ms", "p99_ms",
                                                "max_ms"))
    for r in rows:
        print("%-14s %-7s %7d %9d %8.2f %s %s %s" % (r["phase"], r["probe"], r["probes"], r["served_within_1s"],
                                                   r["served_pct"] or 0, show(r["p50_ms"]), show(r["p99_ms"]),
                                                   show(r["max_ms"])))
    held = revoke["held"]
    print("revocation: %d connections open at it sent a request after it: %d closed (%d within 1 s of that request, "
          "max %s ms, p50 %s ms), %d stayed open; of the closed, %d had been answered 200 with the token before (held), "
          "%d of them within 1 s, max %s ms"
          % (revoke["connections_open_at_revoke"], revoke["closed_after_next_request"], revoke["closed_within_1s"],
             revoke["max_close_delay_ms"], revoke["p50_close_delay_ms"], revoke["not_closed"],
             held["closed_after_next_request"], held["closed_within_1s"], held["max_close_delay_ms"]))
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    print("wrote", os.path.relpath(a.out, ROOT))
    ok = all(r["served_pct"] is not None and r["served_pct"] >= 99.0 for r in rows)
    ok = ok and revoke["not_closed"] == 0 and revoke["closed_within_1s"] == len(delays)
    ok = ok and held["closed_after_next_request"] > 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
