#!/usr/bin/env python3
"""No CI secret reaches a repository's kernel: a kernel that dumps its environment when imported runs under
`rnx bench`, `rnx bench --prestart on`, `rnx bench --pair`, `rnx gate` and `rnx profile` with a CI job's tokens and
credentials set (GitHub's, Actions' runtime, rnx's, the clouds', the model providers', generic secret names, a token
under a harmless name).
Every dump must hold none of them, by name or by value, and keep what kernels need (caches, Python's path, the
locale); a variable named in [bench] pass_env is kept, and in a paired run only when both revisions name it
(docs/runner.md, the workers' environment).

    python3 tests/gate/bench_environment.py --rnx build/bin/rnx
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

KERNEL = """import json as _json
import os as _os

_dump = _os.environ.get("RNX_TEST_ENV_DUMP")
if _dump:
    with open(_os.path.join(_dump, "env-%d-%s.json" % (_os.getpid(), __name__)), "w") as _f:
        _json.dump(dict(_os.environ), _f)


def run(x):
    return x + 1
"""

MANIFEST = """[project]
name = "bench-env"

[defaults]
runtimes = ["eager"]
dtypes = ["float32"]
batch = [1]
device = "cpu"

[bench]
processes = 2
max_processes = 2
min_samples = 2
samples = 4
budget_ms = 20
warmup_ms = 0
pass_env = [{passed}]

[[kernel]]
name = "dump"
path = "dump.py"
inputs = {{ x = "B,8" }}
"""

# A CI job's secrets: none may reach a kernel, by name or by value. Every value is made up for this test.
SECRETS = {
    "GITHUB_TOKEN": "ghs_Qm3Vb8Nx2Lk7Jh5Gf1Ds9Az4Sx6Dc0Fv3Gb7",
    "GH_TOKEN": "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "ACTIONS_RUNTIME_TOKEN": "eyJ0eXAiOiJKV1QifQ.eyJzY3AiOiJBY3Rpb25zIn0.c2lnbmF0dXJlMTIz",
    "ACTIONS_ID_TOKEN_REQUEST_URL": "https://pipelines.example.invalid/oidc-5f1c9a7e",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "eyJ0eXAiOiJKV1QifQ.eyJvaWRjIjoidHJ1ZSJ9.c2lnbmF0dXJlNDU2",
    "RNX_TOKEN": "rnx_up_envtest_5f1c9a7e",
    "RNX_BASELINE_TOKEN": "rnx_bl_envtest_5f1c9a7e",
    "AWS_ACCESS_KEY_ID": "AKIA5QW3RT7YU2IO9PLK",
    "AWS_SECRET_ACCESS_KEY": "q8Vn2Xc5Lm9Kj4Hg7Fd1Sa6Zx3Cv0Bn8Mq2Wp5Er",
    "AWS_SESSION_TOKEN": "FwoGZXIvYXdzEJr-envtest-5f1c9a7e",
    "GOOGLE_APPLICATION_CREDENTIALS": "/tmp/gha-creds-envtest-5f1c9a7e.json",
    "AZURE_CLIENT_SECRET": "Wq8Er2Ty6Ui0Op4-envtest",
    "OPENAI_API_KEY": "sk-proj-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46",
    "ANTHROPIC_API_KEY": "sk-ant-api03-Hs82Kd71Lw93Mq64Nz50Pb27Xc18Vy39Tr46",
    "HF_TOKEN": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "NPM_TOKEN": "npm_Ab3Cd5Ef7Gh9Ij1Kl3Mn5Op7Qr9St1Uv3Wx5Yz",
    "DB_PASSWORD": "Corr3ct-H0rse-Battery-envtest",
    "DATABASE_URL": "postgres://app:Pl4nted-Db-Pass-envtest@db.internal:5432/app",
    "DEPLOY_NOTE": "push with ghp_Zq7Lw2Vx9Kc4Nb8Hj3Tf6Rd1Sg5Pm0Ya2Ue7",
    # Named by the head's pass_env only: kept by a plain run, withheld by a paired one.
    "RNX_TEST_HEAD_ONLY_TOKEN": "rnx-head-only-envtest-5f1c9a7e",
}
# Named by both revisions' pass_env: kept everywhere.
OPTED_IN = {"RNX_TEST_OPTED_IN_TOKEN": "rnx-opted-in-envtest-5f1c9a7e"}


def kept(work):
    """What kernels need, kept as it was set."""
    return {
        "TRITON_CACHE_DIR": os.path.join(work, "triton"),
        "TORCHINDUCTOR_CACHE_DIR": os.path.join(work, "inductor"),
        "PYTHONPATH": os.path.join(work, "pylib"),
        "TOKENIZERS_PARALLELISM": "false",
        "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
        "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
        "LANG": "C.UTF-8",
        "RNX_TEST_KEEP_SETTING": "plain-setting",
    }


def git(repo, *args):
    subprocess.run(["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def write_repo(repo, passed):
    with open(os.path.join(repo, "rnx.toml"), "w") as f:
        f.write(MANIFEST.format(passed=", ".join('"%s"' % n for n in passed)))
    with open(os.path.join(repo, "dump.py"), "w") as f:
        f.write(KERNEL)


def dumps_of(folder):
    found = []
    for path in sorted(glob.glob(os.path.join(folder, "env-*.json"))):
        with open(path) as f:
            found.append((os.path.basename(path), json.load(f)))
    return found


def check_dumps(step, folder, env_kept, passed, withheld_too, problems):
    """Every dump of `step`: no secret by name or value, the kept and passed variables as set."""
    dumps = dumps_of(folder)
    if not dumps:
        problems.append(f"{step}: the kernel dumped no environment (was it run?)")
        return 0
    for name, env in dumps:
        where = f"{step}: {name}"
        withheld = dict(SECRETS)
        for n in passed:
            withheld.pop(n, None)
        withheld.update(withheld_too)
        for n, value in withheld.items():
            if n in env:
                problems.append(f"{where}: {n} reached the kernel")
            for other, v in env.items():
                if value in v:
                    problems.append(f"{where}: the value of {n} reached the kernel as {other}")
        for n, value in {**env_kept, **OPTED_IN, **{k: SECRETS[k] for k in passed if k in SECRETS}}.items():
            if env.get(n) != value:
                problems.append(f"{where}: {n} is {env.get(n)!r}, expected {value!r}")
        for n in ("PATH", "HOME"):
            if n not in env:
                problems.append(f"{where}: {n} is missing")
    return len(dumps)


def run(cmd, cwd, env, step, problems, timeout=280):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        problems.append(f"{step}: exit {p.returncode}: {p.stdout[-1500:]}")
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rnx", required=True)
    a = ap.parse_args()
    rnx = os.path.abspath(a.rnx)
    problems = []
    counts = {}
    with tempfile.TemporaryDirectory(prefix="rnx-bench-env-") as work:
        repo = os.path.join(work, "repo")
        os.makedirs(repo)
        os.makedirs(os.path.join(work, "pylib"))
        # The base revision names one opted-in variable; the head adds a second.
        write_repo(repo, list(OPTED_IN))
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        write_repo(repo, list(OPTED_IN) + ["RNX_TEST_HEAD_ONLY_TOKEN"])
        git(repo, "commit", "-qam", "head")

        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RNX_"))}
        env.update(SECRETS)
        env.update(OPTED_IN)
        env_kept = kept(work)
        env.update(env_kept)
        config = os.path.join(repo, "rnx.toml")

        def dump_folder(step):
            folder = os.path.join(work, "dumps-" + step)
            os.makedirs(folder)
            env["RNX_TEST_ENV_DUMP"] = folder
            return folder

        step = "rnx bench"
        folder = dump_folder(step.replace(" ", "-"))
        run([rnx, "bench", "--config", config, "--out", os.path.join(work, "run.json"), "--quiet"], repo, env, step,
            problems)
        counts[step] = check_dumps(step, folder, env_kept, ["RNX_TEST_HEAD_ONLY_TOKEN"], {}, problems)

        step = "rnx bench --prestart on"  # each next worker started ahead of its job
        folder = dump_folder("prestart")
        run([rnx, "bench", "--config", config, "--prestart", "on", "--out", os.path.join(work, "run-prestart.json"),
             "--quiet"], repo, env, step, problems)
        counts[step] = check_dumps(step, folder, env_kept, ["RNX_TEST_HEAD_ONLY_TOKEN"], {}, problems)

        step = "rnx bench --pair HEAD~1"
        folder = dump_folder("pair")
        run([rnx, "bench", "--config", config, "--pair", "HEAD~1", "--out", os.path.join(work, "head.json"),
             "--base-out", os.path.join(work, "base.json"), "--quiet"], repo, env, step, problems)
        counts[step] = check_dumps(step, folder, env_kept, [],
                                   {"RNX_TEST_HEAD_ONLY_TOKEN": SECRETS["RNX_TEST_HEAD_ONLY_TOKEN"]}, problems)

        step = "rnx gate"
        folder = dump_folder("gate")
        run([rnx, "gate", "--no-github", "--config", config, "--mode", "stored"], repo, env, step, problems)
        counts[step] = check_dumps(step, folder, env_kept, ["RNX_TEST_HEAD_ONLY_TOKEN"], {}, problems)

        step = "rnx profile"
        folder = dump_folder("profile")
        run([rnx, "profile", "--config", config, "--kernel", "dump", "--calls", "2", "--warmup", "0"], repo, env,
            step, problems)
        counts[step] = check_dumps(step, folder, env_kept, ["RNX_TEST_HEAD_ONLY_TOKEN"], {}, problems)

    if problems:
        sys.exit("FAIL:\n  " + "\n  ".join(problems))
    print("ok: " + "; ".join(f"{step}: {n} dumps" for step, n in counts.items()) +
          f", none holding any of {len(SECRETS)} secrets; pass_env kept; the head's own pass_env withheld when paired")


if __name__ == "__main__":
    main()
