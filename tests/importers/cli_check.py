#!/usr/bin/env python3
"""`rnx import` as a command: bad input exits 2 with one line naming the file and JSON path and writes nothing;
the nvbench fixtures (written to nvbench's documented JSON format 1.0, since nvbench cannot be built here) convert
to documents that check-jsonschema accepts; aggregates-only configurations make the verdict abstain with the reason;
`rnx gate --results` gates imported runs against a baseline in the embedded store; and the GitHub Action's
entrypoint imports before it gates (import-format / import-files inputs).

  cli_check.py RNX SCHEMA_DIR FIXTURES_DIR
"""
import json
import os
import pathlib
import shutil
import struct
import subprocess
import sys
import tempfile

failures = []


def rnx_run(rnx, *args, cwd=None):
    # GitHub's variables would make rnx gate read an event; this check is a local run.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    return subprocess.run([rnx, *args], capture_output=True, text=True, timeout=60, cwd=cwd, env=env)


def expect(cond, what):
    if not cond:
        failures.append(what)


def bad_inputs(rnx, tmp):
    good = {"context": {"num_cpus": 2}, "benchmarks": [
        {"name": "BM_a", "run_name": "BM_a", "run_type": "iteration", "repetition_index": i, "real_time": 10 + i,
         "cpu_time": 10 + i, "time_unit": "ns"} for i in range(3)]}
    text = json.dumps(good)
    mixed = json.loads(text)
    mixed["benchmarks"][1]["time_unit"] = "ms"
    dup = json.loads(text)
    dup["benchmarks"][2]["repetition_index"] = 0
    cases = {
        "truncated": (text[: len(text) // 2], "truncated.json:1:", "malformed JSON"),
        "other-tool": (json.dumps({"machine_info": {}, "benchmarks": []}), "other-tool.json: $: not Google Benchmark JSON",
                       "pytest-benchmark"),
        "mixed-units": (json.dumps(mixed), "mixed-units.json: $.benchmarks[1].time_unit:", "mixed units"),
        "duplicate": (json.dumps(dup), "duplicate.json: $.benchmarks[2]: duplicate benchmark BM_a", "repetition 0"),
        "empty": (json.dumps({"context": {}, "benchmarks": []}), "empty.json: $.benchmarks: no benchmarks", "empty run"),
        "aggregates": (json.dumps({"context": {}, "benchmarks": [
            {"name": "BM_a_mean", "run_name": "BM_a", "run_type": "aggregate", "aggregate_name": "mean",
             "real_time": 10, "cpu_time": 10, "time_unit": "ns"}]}),
            "aggregates.json: $.benchmarks[0]: BM_a has only aggregate rows", "--allow-aggregates"),
    }
    for name, (content, prefix, words) in cases.items():
        src = tmp / f"{name}.json"
        src.write_text(content)
        out = tmp / f"{name}.run.json"
        r = rnx_run(rnx, "import", "--format", "gbench", str(src), "--out", str(out), "--project", "demo")
        lines = r.stderr.strip().splitlines()
        ok = (r.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"rnx: error: {tmp}/{prefix}")
              and words in lines[0] and not out.exists())
        expect(ok, f"{name}: exit {r.returncode}, stderr {r.stderr!r}, wrote {out.exists()}")
        print(f"{name}: exit {r.returncode}: {lines[0] if lines else ''}")
    # A good file next to a bad one: still nothing written, and an existing document is left as it was.
    (tmp / "good.json").write_text(text)
    keep = tmp / "kept.run.json"
    keep.write_text("previous")
    r = rnx_run(rnx, "import", "--format", "gbench", str(tmp / "good.json"), str(tmp / "mixed-units.json"),
                "--out", str(keep), "--project", "demo")
    expect(r.returncode == 2 and keep.read_text() == "previous", f"partial import touched {keep}: {r.stderr!r}")
    expect(not list(tmp.glob("kept.run.json.tmp*")), "a temporary file was left behind")


def split_environment_note(stderr):
    """The note on where the environment came from, and the rest of stderr."""
    lines = stderr.splitlines(keepends=True)
    notes = [line for line in lines if line.startswith("rnx import: note: ") and (
        "not on this machine (" in line or ": the file names no machine (" in line)]
    return notes, "".join(line for line in lines if line not in notes)


def machines(rnx, schema, fixtures, tmp):
    """Files that name their machine are filed under it: three Google Benchmark hosts are three environments, the
    Mac's pytest-benchmark file is Darwin arm64, and the import says the machine is not this one; a file that names
    none is filed under this machine, which the import says too. check-jsonschema accepts every document."""
    folder = fixtures / "machines"
    docs = {}
    for name, fmt in (("gbench-laptop", "gbench"), ("gbench-codespace", "gbench"), ("gbench-ci", "gbench"),
                      ("pytest-darwin-m3", "pytest-benchmark"), ("gbench-no-machine", "gbench")):
        out = tmp / f"{name}.run.json"
        r = rnx_run(rnx, "import", "--format", fmt, str(folder / f"{name}.json"), "--out", str(out), "--project",
                    "codec")
        notes, rest = split_environment_note(r.stderr)
        expect(r.returncode == 0 and len(notes) == 1 and rest == "", f"{name}: {r.returncode} {r.stderr!r}")
        docs[name] = json.loads(out.read_text()) if out.exists() else {"environment": {}}
        print(f"{name}: {notes[0].strip() if notes else r.stderr.strip()}")
        if name == "pytest-darwin-m3":
            expect(notes and notes[0].startswith(f"rnx import: note: {folder}/pytest-darwin-m3.json: $.machine_info: "
                                                 "measured on host \"Mayas-MacBook-Pro.local\", Apple M3 Pro, 12 "
                                                 "threads, Darwin 23.4.0 arm64, not on this machine (host \""),
                   f"the Mac's note: {notes}")
        if name == "gbench-no-machine":
            expect(notes and ": $.context: the file names no machine (gbench (release build) recorded no host, CPU or "
                   "OS here), so the environment is this one, where rnx import ran (" in notes[0],
                   f"no machine named: {notes}")
    envs = {name: doc["environment"] for name, doc in docs.items()}
    ids = {envs[n].get("env_id") for n in ("gbench-laptop", "gbench-codespace", "gbench-ci")}
    expect(len(ids) == 3, f"three hosts, env_ids {ids}")
    mac = envs["pytest-darwin-m3"]
    expect((mac.get("os"), mac.get("cpu"), mac.get("threads"), mac.get("host")) ==
           ("Darwin 23.4.0 arm64", "Apple M3 Pro", 12, "Mayas-MacBook-Pro.local"), f"the Mac's environment: {mac}")
    expect(mac.get("source", {}).get("from") == "file" and "imported_on" in mac.get("source", {}),
           f"the Mac's source: {mac.get('source')}")
    expect(envs["gbench-no-machine"].get("source") == {"from": "importing-machine"},
           f"no machine named: {envs['gbench-no-machine'].get('source')}")
    r = subprocess.run(["check-jsonschema", "--schemafile", str(schema / "run.schema.json"),
                        *(str(tmp / f"{name}.run.json") for name in docs)], capture_output=True, text=True,
                       timeout=120)
    expect(r.returncode == 0, f"check-jsonschema on the machines' imports: {r.stdout}{r.stderr}")


def real_shapes(rnx, fixtures, tmp):
    """The shapes of real harness files through the command: notes and warnings on stderr, exit codes, and where the
    project comes from without --project (rnx.toml's [project] name, else the harness's record, else exit 2)."""
    shapes = fixtures / "real_shapes"

    def imported(args, cwd=None):
        out = tmp / "shape.run.json"
        if out.exists():
            out.unlink()
        r = rnx_run(rnx, "import", *args, "--out", str(out), cwd=cwd)
        doc = json.loads(out.read_text()) if out.exists() else None
        # These files name a machine that is not this one ("bench-01"), which the first note says (machines() below
        # checks its words); what follows it is what each case is about.
        r.environment_notes, r.stderr = split_environment_note(r.stderr)
        return r, doc

    r, doc = imported(["--format", "gbench", str(shapes / "gbench-complexity.json"), "--project", "demo"])
    note = (f"rnx import: note: {shapes}/gbench-complexity.json: $.benchmarks[36]: left out 2 complexity rows "
            "(BM_sort_BigO, BM_sort_RMS): ->Complexity() fits a curve over a family's sizes, which measures no one "
            "configuration; each size's own rows are imported")
    expect(r.returncode == 0 and doc and len(doc["results"]) == 3 and r.stderr.strip() == note,
           f"complexity rows: {r.returncode} {r.stderr!r}")
    print("complexity:", r.stdout.strip())
    r, doc = imported(["--format", "gbench", *(str(shapes / f"gbench-process-{i}.json") for i in (1, 2, 3)),
                       "--project", "demo"])
    expect(r.returncode == 0 and r.stderr.startswith(
        f"rnx import: warning: 1 configuration is missing from {shapes}/gbench-process-2.json (in 2 of 3 files): "
        "BM_fill[arg0=4096]/gbench/none/b1;"), f"missing configuration: {r.returncode} {r.stderr!r}")
    print("missing configuration:", r.stderr.strip())
    r, doc = imported(["--format", "gbench", str(shapes / "gbench-one-repetition.json"), "--project", "demo"])
    expect(r.returncode == 2 and doc is None and "has a single repetition (one mean over its 1000 iterations)" in
           r.stderr and "report_aggregates_only" not in r.stderr, f"one repetition: {r.returncode} {r.stderr!r}")
    r, doc = imported(["--format", "nvbench", str(shapes / "nvbench-before-format-1.json"), "--project", "demo"])
    expect(r.returncode == 2 and doc is None and "(a format other than 1.x)" in r.stderr,
           f"old nvbench: {r.returncode} {r.stderr!r}")

    # The project: rnx.toml's [project] name where there is one, then what the harness recorded, else exit 2.
    here = tmp / "with-manifest"
    (here / "kernels").mkdir(parents=True)
    (here / "kernels" / "k.py").write_text("def run(x):\n    return x\n")
    (here / "rnx.toml").write_text('[project]\nname = "from-manifest"\n\n[[kernel]]\nname = "k"\n'
                                   'path = "kernels/k.py"\ninputs = { x = "B,4" }\n')
    gbench = str(shapes / "gbench-complexity.json")
    r, doc = imported(["--format", "gbench", gbench], cwd=here)
    expect(r.returncode == 0 and doc and doc["project"] == "from-manifest" and
           'rnx import: note: project "from-manifest" from rnx.toml ([project] name; no --project given)' in r.stderr,
           f"project from rnx.toml: {r.returncode} {r.stderr!r}")
    r, doc = imported(["--format", "gbench", gbench, "--config", str(here / "rnx.toml")])
    expect(r.returncode == 0 and doc and doc["project"] == "from-manifest", f"--config: {r.returncode} {r.stderr!r}")
    r, doc = imported(["--format", "pytest-benchmark", str(shapes / "pytest-unserializable-run1.json")], cwd=tmp)
    expect(r.returncode == 0 and doc and doc["project"] == "shapes-demo", f"project from the file: {r.stderr!r}")
    r, doc = imported(["--format", "gbench", gbench], cwd=tmp)
    expect(r.returncode == 2 and doc is None and r.stderr.strip() ==
           "rnx: error: no project to file the run under: pass --project NAME, or run rnx import beside the rnx.toml "
           f"that names it ([project] name); {gbench} names none (of the harnesses only pytest-benchmark records "
           "one, in commit_info.project)", f"no project: {r.returncode} {r.stderr!r}")
    print("no project:", r.stderr.strip())
    r, doc = imported(["--format", "gbench", gbench, "--config", str(tmp / "absent.toml")], cwd=tmp)
    expect(r.returncode == 2 and doc is None and "absent.toml: cannot read the manifest" in r.stderr,
           f"--config absent: {r.returncode} {r.stderr!r}")


def slowed_copy(fixtures, dest, factor):
    """The nvbench fixture with every sample time multiplied by factor (its sidecar files rewritten)."""
    shutil.copytree(fixtures / "nvbench", dest)
    for bin_file in (dest / "copy.json-bin").glob("*.bin"):
        data = bin_file.read_bytes()
        values = struct.unpack(f"<{len(data) // 4}f", data)
        bin_file.write_bytes(struct.pack(f"<{len(values)}f", *(v * factor for v in values)))
    return dest / "copy.json"


def nvbench_and_gate(rnx, schema, fixtures, tmp):
    base_json = slowed_copy(fixtures, tmp / "nv-base", 1.0)
    slow_json = slowed_copy(fixtures, tmp / "nv-slow", 1.25)
    docs = {}
    for name, src, extra in (("base", base_json, []), ("slow", slow_json, []),
                             ("summaries", fixtures / "nvbench" / "copy-summaries.json", ["--allow-aggregates"])):
        docs[name] = tmp / f"nv-{name}.run.json"
        r = rnx_run(rnx, "import", "--format", "nvbench", str(src), "--out", str(docs[name]), "--project", "demo",
                    *extra)
        expect(r.returncode == 0, f"nvbench import {name}: {r.stderr}")
        print(r.stdout.strip())
    r = subprocess.run(["check-jsonschema", "--schemafile", str(schema / "run.schema.json"),
                        *map(str, docs.values())], capture_output=True, text=True, timeout=120)
    expect(r.returncode == 0, f"check-jsonschema: {r.stdout}{r.stderr}")
    print(r.stdout.strip())

    def decisions(base, head):
        r = rnx_run(rnx, "compare", str(base), str(head), "--format", "json")
        verdict = json.loads(r.stdout)
        return r.returncode, {c["kernel"] + "/" + c["dtype"]: (c["decision"], c["reason"]) for c in verdict["configs"]}

    code, same = decisions(docs["base"], docs["base"])
    expect(code == 0 and same["copy[Elements=1048576]/float32"][0] == "equivalent", f"identical nvbench: {same}")
    code, slow = decisions(docs["base"], docs["slow"])
    expect(code == 1 and slow["copy[Elements=1048576]/float16"][0] == "slower", f"slowed nvbench: {slow}")
    code, summ = decisions(docs["summaries"], docs["slow"])
    decision, reason = summ["copy[Elements=1048576]/float32"]
    print(f"aggregates-only baseline: {decision}: {reason}")
    expect(decision == "abstain" and reason.startswith("baseline has only aggregates (mean 0.0415 ms of 12)")
           and "no per-sample times" in reason, f"aggregates: {decision} {reason}")

    if "gate" not in rnx_run(rnx, "--help").stdout:
        print("rnx gate is not in this build (RNX_WITH_SERVER=OFF): skipping the gate part")
        return
    store = tmp / "store.db"
    common = ["--store", str(store), "--project", "demo", "--out-dir", str(tmp / "gate-out")]
    r = rnx_run(rnx, "gate", "--results", str(docs["base"]), "--branch", "main", "--commit", "c1", *common, cwd=tmp)
    expect(r.returncode == 0, f"gate baseline: {r.returncode} {r.stdout} {r.stderr}")
    pr = ["--branch", "feature", "--base-branch", "main", "--pull-request", "1", "--mode", "stored"]
    r = rnx_run(rnx, "gate", "--results", str(docs["base"]), "--commit", "c2", *pr, *common, cwd=tmp)
    expect(r.returncode == 0 and "PASS" in r.stdout, f"gate identical: {r.returncode} {r.stdout} {r.stderr}")
    print("gate, identical imported run:", next((l for l in r.stdout.splitlines() if "PASS" in l), r.stderr.strip()))
    r = rnx_run(rnx, "gate", "--results", str(docs["slow"]), "--commit", "c3", *pr, *common, cwd=tmp)
    expect(r.returncode == 1 and "BLOCK" in r.stdout, f"gate slowed: {r.returncode} {r.stdout} {r.stderr}")
    print("gate, slowed imported run: exit", r.returncode)


def action_entrypoint(rnx, gbench_file, tmp):
    """The GitHub Action's entrypoint, installed beside rnx as the image installs it, imports before gating."""
    root = pathlib.Path(__file__).resolve().parents[2]
    bin_dir = tmp / "action-bin"
    bin_dir.mkdir()
    shutil.copy(root / "scripts" / "action-entrypoint.sh", bin_dir / "rnx-action")
    (bin_dir / "rnx").symlink_to(rnx)
    work = tmp / "action-work"
    work.mkdir()
    shutil.copy(gbench_file, work / "gbench-1.json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    # A push to main, as GitHub describes it to the action (no token: no status or comment is posted).
    (work / "event.json").write_text("{}")
    env.update(GITHUB_EVENT_NAME="push", GITHUB_REF="refs/heads/main", GITHUB_SHA="c0ffee",
               GITHUB_EVENT_PATH=str(work / "event.json"),
               GITHUB_REPOSITORY="someone/kernels")  # the project name when the input is blank
    run = lambda *args: subprocess.run(["bash", str(bin_dir / "rnx-action"), *args], capture_output=True, text=True,
                                       timeout=60, cwd=work, env=env)
    r = run("gate", "--import-format=gbench", "--import-files=gbench-*.json", "--project=", "--store=.rnx/db")
    imported = work / ".rnx" / "imported-run.json"
    expect(r.returncode == 0 and imported.exists() and "rnx gate: stored run" in r.stdout,
           f"action entrypoint import: {r.returncode} {r.stdout} {r.stderr}")
    if imported.exists():
        expect(json.loads(imported.read_text())["project"] == "kernels", "action entrypoint: project not defaulted")
    print("action entrypoint:", r.stdout.strip().splitlines()[0] if r.stdout.strip() else r.stderr.strip())
    # With an rnx.toml in the workspace and the project input blank, the manifest's [project] name files the run.
    (work / "kernels").mkdir()
    (work / "kernels" / "k.py").write_text("def run(x):\n    return x\n")
    (work / "rnx.toml").write_text('[project]\nname = "from-manifest"\n\n[[kernel]]\nname = "k"\n'
                                   'path = "kernels/k.py"\ninputs = { x = "B,4" }\n')
    r = run("gate", "--import-format=gbench", "--import-files=gbench-*.json", "--project=", "--store=.rnx/db")
    project = json.loads(imported.read_text())["project"] if imported.exists() else None
    expect(r.returncode == 0 and project == "from-manifest",
           f"action entrypoint with rnx.toml: project {project}, {r.returncode} {r.stdout} {r.stderr}")
    (work / "rnx.toml").unlink()
    r = run("gate", "--import-format=gbench", "--import-files=")
    expect(r.returncode == 2 and "import-format needs import-files" in r.stderr, f"no files: {r.returncode} {r.stderr}")
    r = run("accept", "--import-format=gbench", "--import-files=x.json")
    expect(r.returncode == 2 and "applies to the gate and report-only modes" in r.stderr,
           f"accept with import: {r.returncode} {r.stderr}")


def main():
    rnx, schema, fixtures = (str(pathlib.Path(sys.argv[1]).resolve()), pathlib.Path(sys.argv[2]),
                             pathlib.Path(sys.argv[3]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        bad_inputs(rnx, tmp)
        real_shapes(rnx, fixtures, tmp)
        machines(rnx, schema, fixtures, tmp)
        nvbench_and_gate(rnx, schema, fixtures, tmp)
        if "gate" in rnx_run(rnx, "--help").stdout:
            action_entrypoint(rnx, tmp / "good.json", tmp)
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
