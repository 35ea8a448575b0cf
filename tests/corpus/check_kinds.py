#!/usr/bin/env python3
"""Every file of bench/corpus loads as the kind its manifest implies, through the runner's and the verifier's
own loaders (issue 23: bench and verify agree on the kind of every file of the corpus).

The loaders are the Python halves that rnx-runner-worker and rnx-verify-worker embed (runner/python/
rnx_support.py and verify/python/rnx_verify.py, imported here from the source tree): the verifier's half decides
through the runner's rule (rnx_support.find_entry) whether a .py file is a function kernel or a KernelBench module,
and the C++ side takes that answer; the test checks that both loaders still give the same answer on every file. A [[kernel]] with an
`inputs` table must load as a function whose arity takes those inputs; one without must load as KernelBench, in
both loaders and in both manifests (rnx.toml, rnx.gpu.toml), which must list the same kernels with the same files.
Every candidate in honest/ and cheats/ must load in the verifier as the kind of the reference its header names.
Files that import triton are checked only where triton is installed (they are skipped with a line otherwise).

    python3 tests/corpus/check_kinds.py [REPO_ROOT]
"""
import importlib.util
import os
import subprocess
import sys
import tempfile
import tomllib

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "bench", "corpus")


def import_path(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compiles_at_import(path):
    with open(path, encoding="utf-8") as f:
        return "load_inline(" in f.read()


def needs_triton(path):
    with open(path, encoding="utf-8") as f:
        return any(line.startswith(("import triton", "from triton")) for line in f)


def main():
    runner = import_path("rnx_support_under_test", os.path.join(ROOT, "runner", "python", "rnx_support.py"))
    sys.modules["rnx_support"] = runner  # the verifier's half imports it, as in rnx-verify-worker
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
                _, binding = runner.input_order(loaded, list(k.get("inputs", {})))
                if binding:
                    problems.append(f"{manifest} {name}: the runner's binding of inputs by name: {binding}")
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
            if compiles_at_import(path):
                # load_inline builds a C++/CUDA extension when the file is imported (a minute or more, and nvcc
                # with a GPU): bench/corpus.py verify loads these; here only their header is checked.
                skipped.append(f"{folder}/{file}")
                continue
            if fields.get("package") == "rnx_corpus_kernels":
                subprocess.run([sys.executable, os.path.join(CORPUS, "packages", "install.py")], check=True,
                               stdout=subprocess.DEVNULL)
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

    problems += rule_problems(runner, verifier)
    for s in skipped:
        print(f"skipped (triton is not installed, or it compiles an extension at import): {s}")
    for p in problems:
        print(f"FAIL: {p}")
    print(f"{checked} loads checked, {len(skipped)} skipped, {len(problems)} problem(s)")
    return 1 if problems else 0


# Files at the edges of the rule, with what each loader must make of them: the runner's load (preferring ModelNew),
# the verifier as reference and as candidate. "error: TEXT" means that load must fail with TEXT in its message.
MODEL = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n"
INPUTS = "def get_inputs():\n    return [torch.randn(2, 3)]\ndef get_init_inputs():\n    return []\n"
RULE_CASES = [
    ("a Model class without get_inputs is KernelBench in both; the runner says what it lacks",
     MODEL + "def run(x):\n    return x\n", "",
     "error: needs get_inputs() and get_init_inputs()", "kernelbench", "kernelbench"),
    ("entry = run picks the function beside a Model", MODEL + INPUTS + "def run(x):\n    return x\n", "run",
     "function", "function", "function"),
    ("a ModelNew without Model is the model of that file", MODEL.replace("Model(", "ModelNew(") + INPUTS, "",
     "kernelbench", "error: 'run' is not defined", "kernelbench"),
    ("a class named Model that is not an nn.Module is not KernelBench",
     "class Model:\n    pass\ndef run(x):\n    return x\n", "", "function", "function", "function"),
    ("an entry that is not callable is refused by both", "run = 3\n", "",
     "error: is a int, not a function", "error: is a int, not a function", "error: is a int, not a function"),
]


def rule_problems(runner, verifier):
    """Each RULE_CASES file through the three loads; returns what differs from the expected answers."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (what, source, entry, *expected) in enumerate(RULE_CASES):
            path = os.path.join(tmp, f"rule_case_{i}.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(source)
            loads = [lambda: runner.load(path, entry, f"rule_r{i}"),
                     lambda: verifier.load(path, entry, "reference", f"rule_v{i}"),
                     lambda: verifier.load(path, entry, "candidate", f"rule_c{i}")]
            for name, do_load, want in zip(("runner", "verifier reference", "verifier candidate"), loads, expected):
                try:
                    got = do_load().kind
                except Exception as e:
                    got = f"error: {e}"
                ok = want.removeprefix("error: ") in got if want.startswith("error: ") else got == want
                if not ok:
                    problems.append(f"rule case '{what}': the {name} load gave {got!r}, expected {want!r}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
