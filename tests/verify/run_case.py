#!/usr/bin/env python3
"""Runs `rnx verify` on one corpus file and checks the outcome its header promises.

A corpus file starts with a line such as
    # rnx-verify-case: kernel=attention expect=reject check=fresh_inputs
where kernel names a reference in tests/verify/rnx.toml (or reference=FILE names a KernelBench reference),
expect is accept, review (a stated narrowing of the contract: exit 0, verdict review, the named row review) or
reject, check is the report row that must fail (or ask for review), env=NAME=VALUE is set for the verifier,
package=rnx_corpus_kernels installs the corpus's own kernel library into site-packages first
(bench/corpus/packages/install.py),
args=A,B are extra flags, setup=unix_socket|outside_file|sibling|sysctl|loop_device|terminal|stdin_socket|shm_file|tmpdir|
secret_file prepares a red-team target outside the candidate's scratch folder (a listening Unix socket, a path to plant a file
at, a sibling process of the same user holding a fake secret in its environment, the sysctl named by sysctl=NAME,
a loop block device over a file of the test's, a terminal that is rnx's controlling terminal, stdin and stderr, a
Unix socket on rnx's stdin, a file path in the host's /dev/shm, the temporary folder rnx makes its scratch in, or a
mode-600 file of the test's user outside the candidate's folders, a stand-in for a key under ~/.ssh;
a path goes to the candidate in RNX_VERIFY_REDTEAM_PATH) and checks afterwards that the candidate never reached it
(a sibling that was found shows as a wrong answer: use correct=yes), detail=TEXT demands that the named check's
detail contains TEXT, correct=yes demands that the correctness stages pass (used by containment cases
whose cheat would show up as a wrong answer if it had worked), absent=TEXT demands that TEXT appears nowhere in the
report (a forgery that reached it would carry it), markdown=quoted runs the case again with --format markdown and
demands that the Markdown report links nothing outside code (no @mention, issue reference or URL), shows the
detail= text only inside a fenced code block and carries the absent= text nowhere, pass=ROW,ROW demands that
those rows pass (a crash in one case must not cost the rows after it), and gpu=yes skips (exit 77) without CUDA.
"""
import fcntl
import json
import os
import pty
import re
import termios
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


# What GitHub links in Markdown text: @mentions (users, teams), issue references (#12, GH-12, owner/repo#12, so
# closing keywords) and URLs.
GITHUB_LINK = re.compile(r"(?:^|[^\w`])@[A-Za-z0-9]|#\d|\bGH-\d|[A-Za-z][\w+.-]*://|\bwww\.", re.IGNORECASE | re.MULTILINE)
JOINER = "\u200d"  # what rnx puts inside a mention or reference to break it


def split_code(md):
    """(text outside code with its escapes read, text inside fenced code blocks) of a Markdown document."""
    prose, fenced, fence = [], [], 0
    for line in md.split("\n"):
        stripped = line.lstrip(" ")
        ticks = len(stripped) - len(stripped.lstrip("`"))
        if fence == 0 and ticks >= 3 and len(line) - len(stripped) <= 3:
            fence = ticks
        elif fence and ticks >= fence and not stripped.strip("` "):
            fence = 0
        else:
            (fenced if fence else prose).append(line)
    text = re.sub(r"\\(.)", lambda m: "'" if m.group(1) == "`" else m.group(1), "\n".join(prose))
    text = re.sub(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", " ", text)  # code spans
    return text, "\n".join(fenced)


def markdown_problems(md, h):
    """What a Markdown report published as a comment or summary must not do with the candidate's text."""
    problems = []
    prose, fenced = split_code(md)
    links = GITHUB_LINK.findall(prose)
    if links:
        problems.append(f"the Markdown report links {links[:5]} outside code")
    if h.get("detail") and h["detail"] not in fenced.replace(JOINER, ""):
        problems.append(f"the Markdown report shows {h['detail']!r} in no fenced block")
    if h.get("detail") and h["detail"] in prose:
        problems.append(f"the Markdown report shows {h['detail']!r} outside a fenced block")
    if h.get("absent") and h["absent"] in md:
        problems.append(f"the Markdown report carries {h['absent']}")
    return problems


def gpu_available():
    # The driver's control device, not `import torch`: importing torch costs seconds per test.
    return os.path.exists("/dev/nvidiactl")


class RedTeamTarget:
    """Something outside the verifier's scratch folder that the candidate must not reach."""

    MARKER = b"rnx-redteam"

    def __init__(self, kind, fields):
        self.kind = kind
        self.folder = tempfile.mkdtemp(prefix="rnx-redteam-")
        os.chmod(self.folder, 0o755)
        self.path = os.path.join(self.folder, "target.sock" if kind == "unix_socket" else "planted.txt")
        self.reached = []
        self.stdin = None  # what rnx gets as stdin and stderr, and runs first (subprocess's preexec_fn)
        self.stderr = subprocess.PIPE
        self.preexec = None
        self.env = {}
        if kind == "sysctl":
            self.path = "/proc/sys/" + fields["sysctl"].replace(".", "/")
            with open(self.path) as f:
                self.before = f.read()
        elif kind == "loop_device":
            backing = os.path.join(self.folder, "disk.img")
            with open(backing, "wb") as f:
                f.write(b"\0" * (1 << 20))
            made = subprocess.run(["losetup", "-f", "--show", backing], capture_output=True, text=True)
            if made.returncode != 0:
                shutil.rmtree(self.folder, ignore_errors=True)
                print(f"SKIPPED: no loop device can be made here (needs root): {made.stderr.strip()}")
                sys.exit(77)
            self.path, self.backing = made.stdout.strip(), backing
        elif kind == "terminal":
            self.master, self.slave = pty.openpty()
            os.set_blocking(self.master, False)
            self.stdin = self.stderr = self.slave
            slave = self.slave

            def take_terminal():
                os.setsid()
                fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            self.preexec = take_terminal
        elif kind == "stdin_socket":
            self.inside, self.outside = socket.socketpair()
            self.outside.setblocking(False)
            self.stdin = self.inside.fileno()
        elif kind == "shm_file":
            self.path = "/dev/shm/rnx-redteam-shm-leftover"  # fixed: reading the environment is flagged
            if os.path.exists(self.path):
                os.remove(self.path)
        elif kind == "tmpdir":
            self.env = {"TMPDIR": self.folder}
        elif kind == "secret_file":
            self.path = os.path.join(self.folder, "id_rsa")
            with open(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
                f.write("rnx-redteam private key\n")
        elif kind == "sibling":
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
        elif kind not in ("outside_file", "secret_file"):
            sys.exit(f"unknown setup={kind}")

    def _drain(self, read):
        data = b""
        while True:
            try:
                chunk = read()
            except (BlockingIOError, OSError):
                return data
            if not chunk:
                return data
            data += chunk

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
        elif self.kind == "sysctl":
            with open(self.path) as f:
                after = f.read()
            what = f"the candidate changed {self.path} to {after!r}" if after != self.before else ""
            if what:
                with open(self.path, "w") as f:
                    f.write(self.before)
        elif self.kind == "loop_device":
            subprocess.run(["losetup", "-d", self.path], check=False)
            with open(self.backing, "rb") as f:
                what = f"the candidate wrote into {self.path}" if self.MARKER in f.read() else ""
        elif self.kind == "terminal":
            # Typed input (TIOCSTI) waits on the terminal's input side; its echo reaches the master.
            os.set_blocking(self.slave, False)
            typed = self._drain(lambda: os.read(self.slave, 4096)) + self._drain(lambda: os.read(self.master, 4096))
            os.close(self.slave)
            os.close(self.master)
            what = f"the candidate typed into rnx's terminal: {typed[:80]!r}" if self.MARKER in typed else ""
        elif self.kind == "stdin_socket":
            got = self._drain(lambda: self.outside.recv(4096))
            self.inside.close()
            self.outside.close()
            what = f"the candidate sent through rnx's stdin socket: {got[:80]!r}" if self.MARKER in got else ""
        elif self.kind == "shm_file":
            what = f"the candidate left {self.path} behind" if os.path.exists(self.path) else ""
            if what:
                os.remove(self.path)
        elif self.kind == "tmpdir":
            left = [os.path.join(r, n) for r, ds, fs in os.walk(self.folder) for n in ds + fs]
            what = f"the run left {len(left)} path(s) in its temporary folder: {left[:3]}" if left else ""
            subprocess.run(["chmod", "-R", "u+rwx", self.folder], check=False, capture_output=True)
        elif self.kind == "secret_file":
            what = ""  # what it read shows in the report (absent=)
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
    if h.get("package") == "rnx_corpus_kernels":
        subprocess.run([sys.executable, os.path.join(HERE, "..", "..", "bench", "corpus", "packages", "install.py")],
                       check=True)
    elif h.get("package"):
        sys.exit(f"{path}: package={h['package']} is not one of bench/corpus/packages/")
    env = dict(os.environ)
    if h.get("env"):
        name, _, value = h["env"].partition("=")
        env[name] = value
    target = RedTeamTarget(h["setup"], h) if h.get("setup") else None
    if target:
        env["RNX_VERIFY_REDTEAM_PATH"] = target.path
        env.update(target.env)
    started = time.time()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=target.stderr if target else subprocess.PIPE,
                          stdin=target.stdin if target else None, preexec_fn=target.preexec if target else None,
                          text=True, env=env)
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
    elif h["expect"] == "review":
        check = h.get("check")
        if proc.returncode != 0 or report["verdict"] != "review":
            problems.append(f"a stated narrowing was not accepted for review (exit {proc.returncode}, verdict "
                            f"{report['verdict']}; failed: {report['failed']})")
        if check not in rows or rows[check]["result"] != "review":
            problems.append(f"the {check} row should ask for review: {rows.get(check)}")
        elif h.get("detail") and h["detail"] not in rows[check]["detail"]:
            problems.append(f"the {check} row does not say {h['detail']!r}: {rows[check]['detail']}")
    else:
        if proc.returncode != 1 or report["verdict"] != "rejected":
            problems.append(f"a cheat was accepted (exit {proc.returncode})")
        check = h.get("check")
        if check not in rows:
            problems.append(f"the report has no row named {check}")
        elif rows[check]["result"] != "fail":
            problems.append(f"the named check {check} did not fail: {rows[check]['result']}: {rows[check]['detail']}")
        elif h.get("detail") and h["detail"] not in rows[check]["detail"]:
            problems.append(f"the {check} row does not say {h['detail']!r}: {rows[check]['detail']}")
    if h.get("absent") and h["absent"] in proc.stdout:
        problems.append(f"the report carries {h['absent']}: lines the candidate wrote reached it")
    if h.get("markdown") == "quoted":
        md = subprocess.run([a if a != "json" else "markdown" for a in cmd], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
        problems += markdown_problems(md.stdout, h)
    for name in filter(None, h.get("pass", "").split(",")):
        if rows.get(name, {}).get("result") != "pass":
            problems.append(f"{name} should pass: {rows.get(name)}")
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
