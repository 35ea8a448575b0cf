#!/usr/bin/env python3
"""The sandbox stage fails closed: where new namespaces are refused (as with unprivileged user namespaces disabled),
an honest candidate is rejected with the reason unless --allow-weaker-sandbox is given, and then every report says
so; the network cheat is still rejected by the seccomp filter under the weaker sandbox.

    fail_closed.py RNX NO_NAMESPACES_HELPER
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def verify(rnx, helper, candidate, *extra):
    cmd = [helper, rnx, "verify", "--candidate", os.path.join(HERE, candidate), "--config",
           os.path.join(HERE, "rnx.toml"), "--kernel", "softmax", "--format", "json", "--timeout", "150", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        sys.exit(f"FAIL: no JSON report (exit {p.returncode}) from {' '.join(cmd)}\n{p.stdout}\n{p.stderr}")
    return p.returncode, report, {c["name"]: c for c in report["checks"]}


def main():
    rnx, helper = sys.argv[1], sys.argv[2]
    problems = []

    code, report, rows = verify(rnx, helper, "honest/softmax_fused.py")
    sandbox = rows["sandbox"]
    print(f"no namespaces, honest candidate: exit {code}, {report['verdict']}; sandbox {sandbox['result']}: "
          f"{sandbox['detail'][:260]}")
    if code != 1 or report["verdict"] != "rejected" or sandbox["result"] != "fail":
        problems.append("without namespaces the sandbox stage passed instead of failing closed")
    if "the sandbox could not apply every layer: no network namespace" not in sandbox["detail"] or \
            "--allow-weaker-sandbox" not in sandbox["detail"]:
        problems.append("the failed stage does not name the missing layer and the flag")
    if rows["smoke"]["result"] != "pass":
        problems.append("the candidate itself should still have been checked (smoke)")

    code, report, rows = verify(rnx, helper, "honest/softmax_fused.py", "--allow-weaker-sandbox")
    sandbox = rows["sandbox"]
    print(f"no namespaces, --allow-weaker-sandbox: exit {code}, {report['verdict']}; sandbox {sandbox['result']}: "
          f"{sandbox['detail'][:200]}")
    if code != 0 or report["verdict"] != "accepted" or sandbox["result"] != "pass":
        problems.append("--allow-weaker-sandbox did not let the honest candidate through")
    if not sandbox["detail"].startswith("WEAKER SANDBOX ALLOWED (--allow-weaker-sandbox): no network namespace"):
        problems.append("the report does not say that the weaker sandbox was allowed")

    code, report, rows = verify(rnx, helper, "cheats/network.py", "--allow-weaker-sandbox")
    sandbox = rows["sandbox"]
    print(f"no namespaces, --allow-weaker-sandbox, network cheat: exit {code}, {report['verdict']}; sandbox "
          f"{sandbox['result']}: {sandbox['detail'][:160]}")
    if code != 1 or sandbox["result"] != "fail" or "network socket" not in sandbox["detail"]:
        problems.append("the network cheat was not rejected by the seccomp filter under the weaker sandbox")

    if problems:
        sys.exit("FAIL: " + "; ".join(problems))
    print("ok: the sandbox stage fails closed")


if __name__ == "__main__":
    main()
