#!/usr/bin/env python3
"""Every file of bench/corpus loads as the kind its manifest implies, through the runner's and the verifier's
own loaders (issue 23: bench and verify agree on the kind of every file of the corpus).

The loaders are the Python halves that rnx-runner-worker and rnx-verify-worker embed (runner/python/
rnx_support.py and verify/python/rnx_verify.py, imported here from the source tree): each decides there whether a
.py file is a function kernel or a KernelBench module, and the C++ side takes that answer. A [[kernel]] with an
`inputs` table must load as a function whose arity takes those inputs; one without must load as KernelBench, in
both loaders and in both manifests (rnx.toml, rnx.gpu.toml), which must list the same kernels with the same files.
Every candidate in honest/ and cheats/ must load in the verifier as the kind of the reference its header names.
Files that import triton are checked only where triton is installed (they are skipped with a line otherwise).

    python3 tests/corpus/check_kinds.py [REPO_ROOT]
"""
import importlib.util
import os
import sys
import tomllib

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "bench", "corpus")


def import_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def needs_triton(path):
    with open(path, encoding="utf-8") as f:
        return any(line.startswith(("import triton", "from triton")) for line in f)


def main():
    runner = import_path("rnx_support_under_test", os.path.join(ROOT, "runner", "python", "rnx_support.py"))
    verifier = import_path("rnx_verify_under_test", os.path.join(ROOT, "verify", "python", "rnx_verify.py"))
    have_triton = importlib.util.find_spec("triton") is not None
    problems, checked, skipped = [], 0, []
    manifests = {}
    for manifest in ("rnx.toml", "rnx.gpu.toml"):
        with open(os.path.join(CORPUS, manifest), "rb") as f:
            manifests[manifest] = {k["name"]: k for k in tomllib.load(f)["kernel"]}
    cpu, gpu = manifests["rnx.toml"], manifests["rnx.gpu.toml"]
    if set(cpu) != set(gpu):
        problems.append(f"rnx.toml and rnx.gpu.toml list different kernels: {sorted(set(cpu) ^ set(gpu))}")
    for name in sorted(set(cpu) & set(gpu)):
        if cpu[name]["path"] != gpu[name]["path"] or ("inputs" in cpu[name]) != ("inputs" in gpu[name]):
            problems.append(f"kernel {name}: rnx.toml and rnx.gpu.toml disagree on its file or on having inputs")
    if len(cpu) < 30:
        problems.append(f"the corpus has {len(cpu)} kernels; it must keep at least 30")

    kinds = {}
    for manifest, kernels in manifests.items():
        for name, k in kernels.items():
            path = os.path.join(CORPUS, k["path"])
            if needs_triton(path) and not have_triton:
                skipped.append(k["path"])
                continue
            want = "function" if "inputs" in k else "kernelbench"
            entry = k.get("entry", "")
            module = f"corpus_{manifest.replace('.', '_')}_{name}"
            try:
                loaded = runner.load(path, entry, "r_" + module)
                got_runner = loaded.kind
                arity = runner.check_arity(loaded, list(k.get("inputs", {})))
                if arity:
                    problems.append(f"{manifest} {name}: the runner's arity check: {arity}")
            except Exception as e:  # the loader's own errors, reported as the runner would
                got_runner = f"error ({type(e).__name__}: {e})"
            try:
                got_verifier = verifier.load(path, entry, "reference", "v_" + module).kind
            except Exception as e:
                got_verifier = f"error ({type(e).__name__}: {e})"
            if got_runner != want or got_verifier != want:
                problems.append(f"{manifest} {name} ({k['path']}): the manifest implies {want}; the runner's loader "
                                f"says {got_runner}, the verifier's says {got_verifier}")
            kinds[name] = want
            checked += 1

    for folder in ("honest", "cheats"):
        for file in sorted(os.listdir(os.path.join(CORPUS, folder))):
            if not file.endswith(".py"):
                continue
            path = os.path.join(CORPUS, folder, file)
            with open(path, encoding="utf-8") as f:
                first = f.readline()
            fields = dict(item.partition("=")[::2] for item in first.removeprefix("# rnx-corpus-case:").split())
            reference = fields.get("kernel")
            if not first.startswith("# rnx-corpus-case:") or reference not in cpu:
                problems.append(f"{folder}/{file}: the first line must be '# rnx-corpus-case: kernel=NAME ...' "
                                f"naming a kernel of rnx.toml")
                continue
            triton = needs_triton(path)
            if triton and fields.get("gpu") != "yes":
                problems.append(f"{folder}/{file}: it imports triton, so its header must say gpu=yes")
            if triton and not have_triton:
                skipped.append(f"{folder}/{file}")
                continue
            if reference not in kinds:
                skipped.append(f"{folder}/{file}")
                continue
            try:
                got = verifier.load(path, "", "candidate", f"c_{folder}_{file[:-3]}").kind
            except Exception as e:
                got = f"error ({type(e).__name__}: {e})"
            if got != kinds[reference]:
                problems.append(f"{folder}/{file}: the verifier loads it as {got}, its reference {reference} is "
                                f"{kinds[reference]}")
            checked += 1

    for s in skipped:
        print(f"skipped (triton is not installed): {s}")
    for p in problems:
        print(f"FAIL: {p}")
    print(f"{checked} loads checked, {len(skipped)} skipped, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
