#!/usr/bin/env python3
"""`rnx verify` on bad input: each case must exit 2 with a message that names the problem and the fix."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = os.path.join(HERE, "rnx.toml")
GOOD = os.path.join(HERE, "honest", "softmax_fused.py")


def main():
    rnx = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        broken_ref = os.path.join(tmp, "broken_ref.py")
        with open(broken_ref, "w") as f:
            f.write("import torch\n\ndef run(x):\n    raise RuntimeError('reference is broken')\n")
        cases = [
            ("missing candidate", ["--config", MANIFEST, "--kernel", "softmax", "--candidate", "/nonexistent/c.py"],
             ["candidate /nonexistent/c.py does not exist"]),
            ("unknown kernel", ["--config", MANIFEST, "--kernel", "nope", "--candidate", GOOD],
             ["--kernel \"nope\" is not in", "softmax"]),
            ("missing manifest", ["--config", os.path.join(tmp, "none.toml"), "--kernel", "x", "--candidate", GOOD],
             ["none.toml"]),
            ("no reference", ["--candidate", GOOD], ["no reference"]),
            ("config without kernel", ["--config", MANIFEST, "--candidate", GOOD], ["--config and --kernel go together"]),
            ("bad inputs syntax", ["--reference", os.path.join(HERE, "refs", "softmax.py"), "--inputs", "x:B,96",
                                   "--candidate", GOOD], ["is not NAME=SHAPE"]),
            ("bad shape", ["--reference", os.path.join(HERE, "refs", "softmax.py"), "--inputs", "x=B,zero",
                           "--candidate", GOOD], ["x"]),
            ("function reference without inputs", ["--reference", os.path.join(HERE, "refs", "softmax.py"),
                                                   "--candidate", GOOD], ["no inputs were declared", "--inputs"]),
            ("bad dtype", ["--config", MANIFEST, "--kernel", "softmax", "--candidate", GOOD, "--dtype", "int8"],
             ["int8"]),
            ("bad batch", ["--config", MANIFEST, "--kernel", "softmax", "--candidate", GOOD, "--batch", "0"],
             ["batch sizes must be at least 1"]),
            ("reference that fails", ["--reference", broken_ref, "--inputs", "x=B,8", "--candidate", GOOD],
             ["reference is broken"]),
            ("missing reference entry", ["--reference", os.path.join(HERE, "refs", "softmax.py"), "--inputs", "x=B,8",
                                         "--reference-entry", "nothere", "--candidate", GOOD],
             ["nothere", "is not defined"]),
        ]
        if os.geteuid() == 0:
            # Started as root the sandbox runs the kernels as nobody: a mode-600 kernel (umask 077) is refused up
            # front with the fix, never left to a bare PermissionError inside the worker.
            closed_ref = os.path.join(tmp, "closed_ref.py")
            with open(os.path.join(HERE, "refs", "softmax.py")) as src, open(closed_ref, "w") as f:
                f.write(src.read())
            os.chmod(closed_ref, 0o600)
            cases.append(("reference unreadable by the sandbox's user",
                          ["--reference", closed_ref, "--inputs", "x=B,8", "--candidate", GOOD],
                          ["(mode 600) cannot be read by the sandbox's user nobody", "chmod o+r"]))
        failures = []
        for name, args, needles in cases:
            proc = subprocess.run([rnx, "verify"] + args, capture_output=True, text=True)
            text = proc.stdout + proc.stderr
            missing = [n for n in needles if n not in text]
            if proc.returncode != 2 or missing:
                failures.append(f"{name}: exit {proc.returncode} (want 2), missing {missing} in: {text.strip()[:400]}")
            else:
                print(f"ok: {name}: {text.strip().splitlines()[-1][:160]}")
        if failures:
            sys.exit("FAIL:\n" + "\n".join(failures))


if __name__ == "__main__":
    main()
