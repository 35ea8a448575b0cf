"""Test harness for `rnx gate` end-to-end tests: the real rnx-server, the fake GitHub API, event payloads,
GITHUB_* variables pointing at temp files, and synthetic run documents.

Every process it starts listens on 127.0.0.1 only, is bounded in time, and is stopped when the
harness closes (also on failure).
"""
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, os.pardir, "support"))
from rnx_env import env_id_of  # noqa: E402

REPO = "octo/kernels"
GITHUB_TOKEN = "ghs_e2eTestToken000000000000000000000"
BASE_SHA = "1111111111111111111111111111111111111111"
HEAD_SHA = "2222222222222222222222222222222222222222"
MERGE_SHA = "3333333333333333333333333333333333333333"
# The longest a single rnx invocation may take in these tests (the real runner included).
COMMAND_TIMEOUT_S = 600


class Failure(AssertionError):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def free_port():
    # A port nothing listens on: bound, then closed (the "service down" case connects and is refused).
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def synthetic_run(project, *, scale=1.0, seed=1, kernels=("matmul", "softmax"), n_per_group=12, groups=3,
                  cpu="test cpu", commit="", branch="", base_branch="", pull_request=None):
    """A run document (rnx.run/v1) with log-normal samples around 1 ms (x scale), 3 worker processes, measured on
    `cpu` (another cpu is another environment)."""
    rng = random.Random(seed)
    results = []
    for i, kernel in enumerate(kernels):
        center = (1.0 + 0.5 * i) * scale
        samples = []
        for _ in range(groups):
            shift = rng.gauss(0, 0.002)  # the process-to-process spread
            samples += [round(center * (1 + shift) * (1 + abs(rng.gauss(0, 0.004))), 6) for _ in range(n_per_group)]
        results.append({"kernel": kernel, "runtime": "eager", "dtype": "float32", "batch": 8, "device": "cpu",
                        "status": "ok", "samples_ms": samples, "groups": [n_per_group] * groups,
                        "unstable": False, "max_abs_err": 0.0, "rel_err": 0.0,
                        "tolerance": {"rtol": 1.3e-6, "atol": 1e-5}, "message": ""})
    doc = {"schema": "rnx.run/v1", "project": project, "commit": commit, "branch": branch,
           "base_branch": base_branch, "pull_request": pull_request,
           "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "environment": {"device": "cpu", "compute_capability": "", "driver": "",
                           "cuda": "", "torch": "2.11.0", "python": "3.11.7", "cpu": cpu, "threads": 2,
                           "os": "linux", "image": "none", "clocks": {}},
           "results": results}
    doc["environment"]["env_id"] = env_id_of(doc["environment"])
    return doc


def http_get(url, token):
    """GET with the bearer token; (status, body text)."""
    import urllib.error
    import urllib.request
    req = urllib.request.Request(url, headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode("utf-8")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode("utf-8")


def parse_outputs(path):
    """GITHUB_OUTPUT entries, both `name=value` and `name<<DELIM ... DELIM` forms."""
    out = {}
    if not os.path.exists(path):
        return out
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            value = []
            i += 1
            while i < len(lines) and lines[i] != delim:
                value.append(lines[i])
                i += 1
            check(i < len(lines), "GITHUB_OUTPUT entry %s has no closing delimiter %s" % (name, delim))
            out[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        i += 1
    return out


class Harness:
    def __init__(self, rnx, server_bin, name):
        self.rnx = rnx
        self.server_bin = server_bin
        self.dir = tempfile.mkdtemp(prefix="rnx-e2e-%s-" % name)
        self.procs = []
        self.service_url = None
        self.token = None
        self.github_url = None
        self.github_log = None
        self.counter = 0

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def write_json(self, name, value):
        p = self.path(name)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(value, f, indent=1)
        return p

    # --- processes ------------------------------------------------------------------------------
    def _wait_line(self, proc, needle, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                if proc.poll() is not None:
                    raise Failure("process exited with %s before printing %r" % (proc.returncode, needle))
                continue
            if needle in line:
                return line
        raise Failure("no %r within %ss" % (needle, timeout))

    def write_manifest(self, project, service_url=None, extra=""):
        """A small rnx.toml with one real kernel file, as a user's repository has it."""
        os.makedirs(self.path("kernels"), exist_ok=True)
        with open(self.path("kernels", "scale.py"), "w") as f:
            f.write("def run(x):\n    return x * 2.0\n")
        text = ('[project]\nname = "%s"\n\n[defaults]\nruntimes = ["eager"]\ndtypes = ["float32"]\nbatch = [8]\n'
                'device = "cpu"\n\n[[kernel]]\nname = "scale"\npath = "kernels/scale.py"\nentry = "run"\n'
                'inputs = { x = "B,256" }\n' % project)
        if service_url:
            text += '\n[service]\nurl = "%s"\n' % service_url
        text += extra
        with open(self.path("rnx.toml"), "w") as f:
            f.write(text)
        return self.path("rnx.toml")

    def start_service(self, project, extra_args=()):
        db = self.path("service.db")
        run = lambda *a: subprocess.run([self.server_bin, "admin", *a, "--db", db], capture_output=True, text=True,
                                        timeout=60)
        r = run("project", "create", project)
        check(r.returncode == 0, "rnx-server admin project create failed: " + r.stderr)
        # One token per job, of the scope its workflow gets (docs/service.md, Scopes): pull requests upload with an
        # upload token, pushes (which move the baseline) with a baseline token, /rnx accept comments with an accept
        # token; anything else (a local run) with an admin token.
        self.scoped_tokens = {}
        for event, scope in (("pull_request", "upload"), ("push", "baseline"), ("issue_comment", "accept"),
                             (None, "admin")):
            r = run("token", "create", "--project", project, "--label", "e2e-" + scope, "--scope", scope)
            check(r.returncode == 0, "rnx-server admin token create failed: " + r.stderr)
            self.scoped_tokens[event] = r.stdout.strip().splitlines()[-1]
        self.token = self.scoped_tokens[None]
        proc = subprocess.Popen([self.server_bin, "serve", "--db", db, "--listen", "127.0.0.1:0", "--threads", "2",
                                 "--synchronous", "normal", *extra_args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        self.procs.append(proc)
        line = self._wait_line(proc, "listening on", 30)
        self.service_url = line.split("listening on ", 1)[1].split()[0]
        return self.service_url

    def start_github(self, setup):
        setup = dict(setup)
        setup.setdefault("token", GITHUB_TOKEN)
        setup_path = self.write_json("github-setup.json", setup)
        self.github_log = self.path("github-requests.jsonl")
        port_file = self.path("github.port")
        proc = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_github.py"), "--repo", REPO, "--setup",
                                 setup_path, "--log", self.github_log, "--port-file", port_file,
                                 "--max-seconds", "900", "--max-requests", "500"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            if proc.poll() is not None or time.time() > deadline:
                raise Failure("the fake GitHub API did not start: " + (proc.stderr.read() if proc.poll() is not None else "timeout"))
            time.sleep(0.05)
        self.github_url = "http://127.0.0.1:" + open(port_file).read().strip()
        return self.github_url

    def start_python_server(self, script_args, name):
        """A helper server (a failing service) that writes its port to a file."""
        port_file = self.path(name + ".port")
        proc = subprocess.Popen([sys.executable, *script_args, "--port-file", port_file], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        deadline = time.time() + 20
        while not os.path.exists(port_file):
            if proc.poll() is not None or time.time() > deadline:
                raise Failure(name + " did not start")
            time.sleep(0.05)
        return "http://127.0.0.1:" + open(port_file).read().strip()

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    # --- GitHub's side --------------------------------------------------------------------------
    def github_requests(self):
        if not self.github_log or not os.path.exists(self.github_log):
            return []
        return [json.loads(l) for l in open(self.github_log, encoding="utf-8") if l.strip()]

    def github_get(self, path):
        import urllib.request
        req = urllib.request.Request(self.github_url + path, headers={
            "Authorization": "Bearer " + GITHUB_TOKEN, "User-Agent": "e2e-check",
            "Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def event_env(self, event_name, payload, ref, sha, extra=None):
        """GITHUB_* variables as GitHub Actions sets them, pointing at fresh temp files."""
        self.counter += 1
        tag = "%s-%d" % (event_name, self.counter)
        event_path = self.write_json("event-%s.json" % tag, payload)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_", "RNX_", "INPUT_"))}
        env.update({
            "GITHUB_ACTIONS": "true", "CI": "true",
            "GITHUB_EVENT_NAME": event_name, "GITHUB_EVENT_PATH": event_path,
            "GITHUB_REPOSITORY": REPO, "GITHUB_REF": ref, "GITHUB_SHA": sha,
            "GITHUB_RUN_ID": str(9000 + self.counter), "GITHUB_JOB": "benchmark",
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_ACTOR": "octocat",
            "GITHUB_STEP_SUMMARY": self.path("summary-%s.md" % tag),
            "GITHUB_OUTPUT": self.path("output-%s.txt" % tag),
            "RUNNER_ENVIRONMENT": "self-hosted",
        })
        if self.github_url:
            env["GITHUB_API_URL"] = self.github_url
            env["GITHUB_TOKEN"] = GITHUB_TOKEN
        if self.token:
            env["RNX_TOKEN"] = self.scoped_tokens.get(event_name, self.token)
        if event_name == "pull_request" and "pull_request" in payload:
            env["GITHUB_BASE_REF"] = payload["pull_request"]["base"]["ref"]
            env["GITHUB_HEAD_REF"] = payload["pull_request"]["head"]["ref"]
        env.update(extra or {})
        open(env["GITHUB_STEP_SUMMARY"], "w").close()
        open(env["GITHUB_OUTPUT"], "w").close()
        return env

    def run_rnx(self, args, env, cwd=None, expect=None):
        r = subprocess.run([self.rnx, *args], env=env, cwd=cwd or self.dir, capture_output=True, text=True,
                           timeout=COMMAND_TIMEOUT_S)
        r.summary = open(env["GITHUB_STEP_SUMMARY"], encoding="utf-8").read() if "GITHUB_STEP_SUMMARY" in env else ""
        r.outputs = parse_outputs(env["GITHUB_OUTPUT"]) if "GITHUB_OUTPUT" in env else {}
        if expect is not None and r.returncode != expect:
            raise Failure("rnx %s exited %d, expected %d\n--- stdout\n%s\n--- stderr\n%s" % (
                " ".join(args), r.returncode, expect, r.stdout, r.stderr))
        return r


def pull_request_payload(number=7, head_ref="faster-softmax", head_sha=HEAD_SHA, base_ref="main", base_sha=BASE_SHA,
                         head_repo=REPO):
    repo = {"full_name": REPO, "name": REPO.split("/")[1], "owner": {"login": REPO.split("/")[0]}}
    fork = {"full_name": head_repo, "name": head_repo.split("/")[1], "owner": {"login": head_repo.split("/")[0]}}
    return {"action": "synchronize", "number": number,
            "pull_request": {"number": number, "state": "open", "title": "Make softmax faster",
                             "head": {"ref": head_ref, "sha": head_sha, "repo": fork},
                             "base": {"ref": base_ref, "sha": base_sha, "repo": repo}},
            "repository": dict(repo, default_branch="main"), "sender": {"login": "octocat"}}


def push_payload(branch="main", after=BASE_SHA, before="0" * 40):
    repo = {"full_name": REPO, "name": REPO.split("/")[1], "owner": {"login": REPO.split("/")[0]},
            "default_branch": "main"}
    return {"ref": "refs/heads/" + branch, "before": before, "after": after, "repository": repo,
            "pusher": {"name": "octocat"}, "head_commit": {"id": after, "message": "merge"}}


def issue_comment_payload(number, body, login, comment_id):
    repo = {"full_name": REPO, "name": REPO.split("/")[1], "owner": {"login": REPO.split("/")[0]}}
    return {"action": "created",
            "issue": {"number": number, "title": "Make softmax faster", "state": "open",
                      "pull_request": {"url": "https://api.github.com/repos/%s/pulls/%d" % (REPO, number)}},
            "comment": {"id": comment_id, "body": body, "user": {"login": login, "type": "User"}},
            "repository": repo, "sender": {"login": login}}
