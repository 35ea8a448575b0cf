#!/usr/bin/env python3
"""Runs the data-driven `rnx compare` cases in tests/compare/cases/*.case against an rnx binary.

A case file holds header lines, then files:
    # name: what the case shows
    # args: extra arguments after the two file names (default: base.json head.json)
    # exit: the expected exit code
    # stderr: the exact one-line error message expected (optional)
    # stdout-contains: a substring expected on stdout (optional, repeatable)
    == base.json
    <file content, or "@run KERNEL:CENTER[:N] ..." to generate a run with N samples per kernel>
    == head.json
    ...
"""
import json
import math
import pathlib
import subprocess
import sys
import tempfile


def generated_run(spec: str) -> str:
    results = []
    for item in spec.split():
        parts = item.split(":")
        kernel, center = parts[0], float(parts[1])
        n = int(parts[2]) if len(parts) > 2 else 20
        # Deterministic small wiggle: every sample within 0.3% of the center.
        samples = [round(center * (1 + 0.003 * math.sin(1.7 * i)), 6) for i in range(n)]
        results.append({"kernel": kernel, "runtime": "eager", "dtype": "float32", "batch": 8,
                         "device": "cpu", "status": "ok", "samples_ms": samples, "message": ""})
    return json.dumps({"schema": "rnx.run/v1", "project": "demo", "commit": "abc", "branch": "b",
                       "base_branch": "main", "created_at": "2026-12-02T00:00:00Z",
                       "environment": {"env_id": "e1", "device": "cpu"}, "results": results}, indent=1)


def parse_case(path: pathlib.Path):
    header, files, current = {}, {}, None
    for line in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines(keepends=True):
        if line.startswith("== "):
            current = line[3:].strip()
            files[current] = ""
        elif current is not None:
            files[current] += line
        elif line.startswith("# "):
            key, _, value = line[2:].partition(":")
            header.setdefault(key.strip(), []).append(value.strip())
    return header, files


def run_case(rnx: str, path: pathlib.Path) -> list:
    header, files = parse_case(path)
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, content in files.items():
            if content.startswith("@run "):
                content = generated_run(content[5:].strip())
            data = content.encode("utf-8", errors="surrogateescape")
            if name.endswith(".json") and data.endswith(b"\n"):
                data = data[:-1]
            (pathlib.Path(tmp) / name).write_bytes(data)
        args = header.get("args", ["base.json head.json"])[0].split()
        proc = subprocess.run([rnx, "compare", *args], cwd=tmp, capture_output=True, text=True, timeout=60)
        expected_exit = int(header["exit"][0])
        if proc.returncode != expected_exit:
            problems.append(f"exit {proc.returncode}, expected {expected_exit}")
        if "stderr" in header:
            lines = proc.stderr.strip().splitlines()
            want = header["stderr"][0]
            if lines != [want]:
                problems.append(f"stderr {proc.stderr.strip()!r}, expected exactly {want!r}")
        for want in header.get("stdout-contains", []):
            if want not in proc.stdout:
                problems.append(f"stdout lacks {want!r}:\n{proc.stdout}")
        if "ERROR: AddressSanitizer" in proc.stderr or "runtime error:" in proc.stderr:
            problems.append("sanitizer report:\n" + proc.stderr)
    return problems


def main() -> int:
    rnx = str(pathlib.Path(sys.argv[1]).resolve())
    cases = sorted((pathlib.Path(__file__).parent / "cases").glob("*.case"))
    failed = 0
    for case in cases:
        problems = run_case(rnx, case)
        print(("FAIL " if problems else "ok   ") + case.name)
        for p in problems:
            print("     " + p)
        failed += bool(problems)
    print(f"{len(cases) - failed}/{len(cases)} compare cases passed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
