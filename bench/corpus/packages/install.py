#!/usr/bin/env python3
"""Installs the corpus's own kernel library (rnx_corpus_kernels/) into this interpreter's site-packages with pip,
as a user would install a kernel library: what `rnx verify` then sees is a package among torch's neighbours, not a
file beside the candidate.

    python3 bench/corpus/packages/install.py [--python PYTHON] [--check]

The wheel is assembled here from src/ (a wheel is a zip archive with a .dist-info folder), so no build backend
(setuptools, wheel) and no package index is needed: the GPU machine has neither. Idempotent: an installed copy
whose files match the sources is left alone. --check only says whether it is installed and current (exit 0/1).
"""
import argparse
import base64
import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.join(HERE, "rnx_corpus_kernels")


def project_metadata():
    with open(os.path.join(PROJECT, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    return project["name"], project["version"], project["description"]


def source_files():
    """(path in the wheel, bytes) of every .py file of the package, in a stable order."""
    src = os.path.join(PROJECT, "src")
    out = []
    for folder, _, names in sorted(os.walk(src)):
        for name in sorted(names):
            if name.endswith(".py"):
                full = os.path.join(folder, name)
                with open(full, "rb") as f:
                    out.append((os.path.relpath(full, src).replace(os.sep, "/"), f.read()))
    return out


def record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(folder):
    name, version, description = project_metadata()
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    files = source_files()
    files.append((f"{info}/METADATA", (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                       f"Summary: {description}\nRequires-Dist: torch\n").encode()))
    files.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: rnx-corpus\nRoot-Is-Purelib: true\n"
                                   b"Tag: py3-none-any\n"))
    record = "\n".join([record_line(p, d) for p, d in files] + [f"{info}/RECORD,,"]) + "\n"
    path = os.path.join(folder, f"{dist}-{version}-py3-none-any.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files:
            z.writestr(p, d)
        z.writestr(f"{info}/RECORD", record)
    return path


def installed_is_current(python):
    """True when `python` imports the package from site-packages with the same sources as here."""
    probe = ("import importlib.util, os, sys\n"
             "spec = importlib.util.find_spec('rnx_corpus_kernels')\n"
             "print(os.path.dirname(spec.origin) if spec and spec.origin else '')\n")
    where = subprocess.run([python, "-c", probe], capture_output=True, text=True, cwd="/").stdout.strip()
    if not where:
        return False
    for path, data in source_files():
        target = os.path.join(os.path.dirname(where), path)
        try:
            with open(target, "rb") as f:
                if f.read() != data:
                    return False
        except OSError:
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the interpreter to install into")
    parser.add_argument("--check", action="store_true", help="only report whether it is installed and current")
    args = parser.parse_args()
    # Tests that run at once (ctest -j) may each install it: one at a time, the others then find it current.
    with open(os.path.join(tempfile.gettempdir(), "rnx-corpus-kernels-install.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return install(args)


def install(args):
    if installed_is_current(args.python):
        print("rnx_corpus_kernels: installed and current")
        return 0
    if args.check:
        print("rnx_corpus_kernels: not installed (or out of date); run bench/corpus/packages/install.py")
        return 1
    with tempfile.TemporaryDirectory(prefix="rnx-corpus-wheel-") as folder:
        wheel = build_wheel(folder)
        subprocess.run([args.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--no-index", "--force-reinstall", wheel], check=True)
    if not installed_is_current(args.python):
        sys.exit("rnx_corpus_kernels: pip installed the wheel, but the interpreter does not import it")
    print("rnx_corpus_kernels: installed into site-packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
