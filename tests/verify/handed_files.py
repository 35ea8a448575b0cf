#!/usr/bin/env python3
"""The sandbox is handed the kernels' files; it never reaches them, or anything beside them, by path.

A project in a mode-700 temporary folder (as `mktemp -d` makes it, and as /root is) holds a reference, an honest
candidate that imports a helper module beside it, and, planted world-readable beside the kernels, at the
project's root and in the home folder, a .env and a cloud login's service-account JSON (gha-creds-*.json, as
google-github-actions/auth leaves it). Started as root the worker's user could not enter the project at all.

1. `rnx verify` on the honest candidate, run from inside the project with relative paths: accepted, exit 0.
2. `rnx verify` on a candidate that tries to read every planted file (at import and at its call, by the paths
   the test gives it) and raises with whatever it read: every read refused (the report says rnx-nothing-read and
   names each path), and no byte of any planted file in the JSON or the Markdown report, stdout or stderr.

    handed_files.py RNX
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

MANIFEST = """[project]
name = "rnx-handed-files"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [4]
device = "cpu"

[[kernel]]
name = "softmax"
path = "kernels/softmax.py"
inputs = { x = "B,96" }
"""

HONEST = """import torch

from softmax_helpers import stable_softmax


def run(x):
    return stable_softmax(x)
"""

HELPERS = """import torch


def stable_softmax(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    shifted.exp_()
    return shifted.div_(shifted.sum(dim=-1, keepdim=True))
"""

# The snooping candidate: PLANTED is replaced by the list of paths to try.
SNOOP = """import os

import torch

PLANTED = {planted!r}


def _read_all():
    read, refused = [], []
    for path in PLANTED:
        try:
            with open(path, "rb") as f:
                text = f.read(300)
        except OSError as e:
            refused.append(f"{{path}} ({{e.strerror}})")
            continue
        read.append(f"rnx-read:{{path}}:{{text!r}}")
    for folder in {folders!r}:
        try:
            read.append(f"rnx-read:{{folder}}:listed {{sorted(os.listdir(folder))!r}}")
        except OSError as e:
            refused.append(f"{{folder}} ({{e.strerror}})")
    return read, refused


AT_IMPORT = _read_all()


def run(x):
    read, refused = _read_all()
    read += AT_IMPORT[0]
    if read:
        raise RuntimeError("; ".join(read))
    raise RuntimeError("rnx-nothing-read: " + "; ".join(refused))
"""

SERVICE_ACCOUNT = {
    "type": "service_account",
    "project_id": "rnx-planted-project",
    "private_key_id": "rnx0planted0key0id",
    "private_key": "-----BEGIN PRIVATE KEY-----\nrnx-planted-service-account-key\n-----END PRIVATE KEY-----\n",
    "client_email": "rnx-planted@rnx-planted-project.iam.gserviceaccount.com",
}


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def plant(folder, tag):
    """A .env and a service-account JSON in `folder`, readable by anyone; returns (paths, secret markers)."""
    env_secret = f"rnx-planted-dotenv-{tag}"
    sa = dict(SERVICE_ACCOUNT, private_key=SERVICE_ACCOUNT["private_key"].replace("key\n", f"key-{tag}\n"))
    env_path = os.path.join(folder, ".env")
    sa_path = os.path.join(folder, "gha-creds-3f9a1c2b7d4e5f60.json")
    write(env_path, f"RNX_PLANTED_TOKEN={env_secret}\nAWS_SECRET_ACCESS_KEY={env_secret}-aws\n")
    write(sa_path, json.dumps(sa, indent=2))
    return [env_path, sa_path], [env_secret, f"rnx-planted-service-account-key-{tag}", "rnx0planted0key0id"]


def run(rnx, cwd, candidate, fmt):
    cmd = [rnx, "verify", "--config", "rnx.toml", "--kernel", "softmax", "--candidate", candidate,
           "--format", fmt, "--timeout", "150"]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=240)


def main():
    rnx = os.path.abspath(sys.argv[1])
    problems = []
    project = tempfile.mkdtemp(prefix="rnx-handed-")  # mode 700, as mktemp -d makes it
    home = os.path.join(os.path.expanduser("~"), f".rnx-handed-test-{os.getpid()}")
    try:
        os.chmod(project, 0o700)
        kernels = os.path.join(project, "kernels")
        write(os.path.join(project, "rnx.toml"), MANIFEST)
        os.makedirs(kernels, mode=0o755)
        os.chmod(kernels, 0o755)
        with open(os.path.join(HERE, "refs", "softmax.py")) as f:
            write(os.path.join(kernels, "softmax.py"), f.read())
        write(os.path.join(kernels, "softmax_fast.py"), HONEST)
        write(os.path.join(kernels, "softmax_helpers.py"), HELPERS)
        os.makedirs(home, mode=0o755)
        os.chmod(home, 0o755)
        planted, secrets = [], []
        for folder, tag in ((kernels, "beside"), (project, "root"), (home, "home")):
            paths, markers = plant(folder, tag)
            planted += paths
            secrets += markers
        planted.append(os.path.join(kernels, "softmax.py"))  # the reference where it lies, by its path
        write(os.path.join(kernels, "softmax_snoop.py"), SNOOP.format(planted=planted, folders=[kernels, project, home]))

        # 1. Under the mode-700 folder, relative paths, as a user types them: accepted.
        honest = run(rnx, project, "kernels/softmax_fast.py", "json")
        try:
            verdict = json.loads(honest.stdout)["verdict"]
        except (json.JSONDecodeError, KeyError):
            verdict = None
        if honest.returncode != 0 or verdict != "accepted":
            problems.append(f"the honest candidate under a mode-700 folder: exit {honest.returncode}, verdict "
                            f"{verdict}\n{honest.stdout[-1500:]}\n{honest.stderr[-1500:]}")
        else:
            print("ok: an honest candidate (with a helper module beside it) under a mode-700 folder is accepted")

        # 2. The snooping candidate: every read refused, nothing of the planted files in any report.
        snoop = run(rnx, project, os.path.join(kernels, "softmax_snoop.py"), "json")
        markdown = run(rnx, project, os.path.join(kernels, "softmax_snoop.py"), "markdown")
        try:
            report = json.loads(snoop.stdout)
            rows = {c["name"]: c for c in report["checks"]}
        except (json.JSONDecodeError, KeyError):
            report, rows = {}, {}
        if snoop.returncode != 1 or report.get("verdict") != "rejected":
            problems.append(f"the snooping candidate: exit {snoop.returncode}, verdict {report.get('verdict')}\n"
                            f"{snoop.stdout[-1500:]}\n{snoop.stderr[-1500:]}")
        smoke = rows.get("smoke", {}).get("detail", "")
        if "rnx-nothing-read" not in smoke:
            problems.append(f"the snooping candidate read something, or never ran: smoke says {smoke[:1500]!r}")
        for path in planted + [kernels, project, home]:
            if path not in smoke:
                problems.append(f"the smoke row does not name {path} among the refused reads")
        everything = snoop.stdout + snoop.stderr + markdown.stdout + markdown.stderr
        for secret in secrets + ["rnx-read:"]:
            if secret in everything:
                problems.append(f"{secret!r} reached the verify report")
        if not problems:
            print(f"ok: {len(planted)} planted files (beside the kernel, at the project's root, in the home folder) "
                  f"and 3 folders refused; none of their contents in the JSON or Markdown report")
    finally:
        shutil.rmtree(project, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    if problems:
        sys.exit("FAIL: " + "\nFAIL: ".join(problems))


if __name__ == "__main__":
    main()
