"""What the source lints share: the tracked C/C++ sources they read, and how a self-test's cases are reported."""
import subprocess


def tracked_sources(root):
    """The C/C++ files git tracks under `root`, as paths relative to it."""
    return subprocess.run(["git", "-C", root, "ls-files", "*.cpp", "*.hpp", "*.cu", "*.h"], check=True,
                          stdout=subprocess.PIPE, text=True).stdout.split()


def read_sources(root, paths, exempt):
    """path -> text of each of `paths` that does not start with one of the `exempt` prefixes."""
    texts = {}
    for path in paths:
        if path.startswith(exempt):
            continue
        with open(f"{root}/{path}", encoding="utf-8") as f:
            texts[path] = f.read()
    return texts


def report_self_tests(name, results):
    """`results`: (description, problems found, problems expected) per case. Prints each miss and a total; the exit
    status (1 when any case missed)."""
    failures = 0
    for description, got, expected in results:
        if got != expected:
            print(f"self-test: {description}: {got} problem(s), expected {expected}")
            failures += 1
    print(f"{name} self-test: {len(results)} cases, {failures} failed")
    return 1 if failures else 0
