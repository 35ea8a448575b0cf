#!/usr/bin/env python3
"""Runs `rnx verify` on one corpus file and checks the outcome its header promises.

A corpus file starts with a line such as
    # rnx-verify-case: kernel=attention expect=reject check=fresh_inputs
where kernel names a reference in tests/verify/rnx.toml (or reference=FILE names a KernelBench reference),
expect is accept or reject, check is the report row that must fail, env=NAME=VALUE is set for the verifier,
args=A,B are extra flags, setup=unix_socket|outside_file|sibling prepares a red-team target outside the candidate's
scratch folder (a listening Unix socket, a path to plant a file at, or a sibling process of the same user holding
a fake secret in its environment; a path goes to the candidate in RNX_VERIFY_REDTEAM_PATH) and checks afterwards
that the candidate never reached it (a sibling that was found shows as a wrong answer: use correct=yes), correct=yes demands that the correctness stages pass (used by containment cases
whose cheat would show up as a wrong answer if it had worked), absent=TEXT demands that TEXT appears nowhere in the
report (a forgery that reached it would carry it), and gpu=yes skips (exit 77) without CUDA.
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def header(path):
    with open(path, encoding="utf-8") as f:
        first = f.readline()
    prefix = "# rnx-verify-case:"
    if not first.startswith(prefix):
        sys.exit(f"{path}: the first line must be '{prefix} ...' describing the expected outcome")
    fields = {}
    for item in first[len(prefix):].split():
        key, _, value = item.partition("=")
        fields[key] = value
    return fields


def gpu_available():
    # The driver's control device, not `import torch`: importing torch costs seconds per test.
    return os.path.exists("/dev/nvidiactl")


class RedTeamTarget:
    """Something outside the verifier's scratch folder that the candidate must not reach."""

    def __init__(self, kind):
        self.kind = kind
        self.folder = tempfile.mkdtemp(prefix="rnx-redteam-")
        self.path = os.path.join(self.folder, "target.sock" if kind == "unix_socket" else "planted.txt")
        self.reached = []
        if kind == "sibling":
            self.sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                                            env={**os.environ, "GITHUB_TOKEN": "rnx-sibling-secret"})
        elif kind == "unix_socket":
            self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.server.bind(self.path)
            self.server.listen(8)
            self.server.settimeout(0.2)
            self.stop = False
            self.thread = threading.Thread(target=self._accept, daemon=True)
            self.thread.start()
        elif kind != "outside_file":
            sys.exit(f"unknown setup={kind}")

    def _accept(self):
        while not self.stop:
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.reached.append(conn.recv(100))
            conn.close()

    def finish(self):
        """What the candidate did to the target, or an empty string when it never reached it."""
        if self.kind == "sibling":
            self.sibling.kill()
            self.sibling.wait()
            what = ""
        elif self.kind == "unix_socket":
            self.stop = True
            self.thread.join()
            self.server.close()
            what = f"the candidate connected to {self.path}: {self.reached}" if self.reached else ""
        else:
            what = f"the candidate wrote {self.path}" if os.path.exists(self.path) else ""
        shutil.rmtree(self.folder, ignore_errors=True)
        return what


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: run_case.py RNX_BINARY CORPUS_FILE")
    rnx, path = sys.argv[1], os.path.abspath(sys.argv[2])
    h = header(path)
    if h.get("gpu") == "yes" and not gpu_available():
        print(f"SKIPPED: {os.path.basename(path)} needs a CUDA GPU (run tests/device/ on a GPU machine)")
        sys.exit(77)
    # Below ctest's 180 s per test, so a hang is reported by the verifier itself.
    cmd = [rnx, "verify", "--candidate", path, "--format", "json"]
    if "--timeout" not in h.get("args", ""):
        cmd += ["--timeout", "150"]
    if "kernel" in h:
        cmd += ["--config", os.path.join(HERE, "rnx.toml"), "--kernel", h["kernel"]]
    else:
        cmd += ["--reference", os.path.join(HERE, h["reference"])]
    if h.get("gpu") == "yes":
        cmd += ["--device", "cuda"]
    if h.get("args"):
        cmd += h["args"].split(",")
    env = dict(os.environ)
    if h.get("env"):
        name, _, value = h["env"].partition("=")
        env[name] = value
    target = RedTeamTarget(h["setup"]) if h.get("setup") else None
    if target:
        env["RNX_VERIFY_REDTEAM_PATH"] = target.path
    started = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.time() - started
    breach = target.finish() if target else ""
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        sys.exit(f"FAIL: no JSON report (exit {proc.returncode})\ncommand: {' '.join(cmd)}\nstdout: {proc.stdout}\n"
                 f"stderr: {proc.stderr}")
    rows = {c["name"]: c for c in report["checks"]}
    summary = ", ".join(f"{c['name']}={c['result']}" for c in report["checks"])
    problems = [breach] if breach else []
    if h["expect"] == "accept":
        if proc.returncode != 0 or report["verdict"] != "accepted":
            problems.append(f"an honest rewrite was rejected (exit {proc.returncode}; failed: {report['failed']})")
    else:
        if proc.returncode != 1 or report["verdict"] != "rejected":
            problems.append(f"a cheat was accepted (exit {proc.returncode})")
        check = h.get("check")
        if check not in rows:
            problems.append(f"the report has no row named {check}")
        elif rows[check]["result"] != "fail":
            problems.append(f"the named check {check} did not fail: {rows[check]['result']}: {rows[check]['detail']}")
    if h.get("absent") and h["absent"] in proc.stdout:
        problems.append(f"the report carries {h['absent']}: lines the candidate wrote reached it")
    if h.get("correct") == "yes":
        for stage in ("smoke", "shape_sweep", "edge_cases"):
            if rows.get(stage, {}).get("result") != "pass":
                problems.append(f"{stage} should pass (the cheat must not have worked): {rows.get(stage)}")
    if problems:
        print(f"command: {' '.join(cmd)}")
        for c in report["checks"]:
            print(f"  {c['name']:22} {c['result']:7} {c['detail'][:300]}")
        sys.exit("FAIL: " + "; ".join(problems))
    named = h.get("check", "")
    detail = rows[named]["detail"][:200] if named in rows else ""
    print(f"ok: {os.path.basename(path)} {report['verdict']} in {took:.1f} s"
          + (f"; {named}: {detail}" if named else "") + f"\n  [{summary}]")
    # RNX_CASE_SHOW=check[,check...]: also print those checks' details (the GPU suite records hidden_work's).
    for name in filter(None, os.environ.get("RNX_CASE_SHOW", "").split(",")):
        if name in rows:
            print(f"  {name}: {rows[name]['result']}: {rows[name]['detail'][:400]}")


if __name__ == "__main__":
    main()
