#!/usr/bin/env python3
"""Checks that rnx's documents agree with docs/schema: what rnx writes validates, and the bad run
documents of the compare cases that rnx rejects for their content are rejected by the schema too."""
import json
import pathlib
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from run_cases import generated_run, parse_case  # noqa: E402


def main():
    rnx, schema_dir = sys.argv[1], pathlib.Path(sys.argv[2])
    run_schema = json.loads((schema_dir / "run.schema.json").read_text())
    verdict_schema = json.loads((schema_dir / "verdict.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(run_schema)
    jsonschema.Draft202012Validator.check_schema(verdict_schema)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        base, head = pathlib.Path(tmp, "base.json"), pathlib.Path(tmp, "head.json")
        base.write_text(generated_run("a:1.0 b:2.0 c:1.0:4 e:1.0"))
        head.write_text(generated_run("a:1.0 b:2.6 c:1.0:4 d:1.0"))
        for doc in (base, head):
            jsonschema.validate(json.loads(doc.read_text()), run_schema)
        out = subprocess.run([rnx, "compare", str(base), str(head), "--format", "json"], capture_output=True,
                             text=True, timeout=60)
        verdict = json.loads(out.stdout)
        jsonschema.validate(verdict, verdict_schema)
        decisions = sorted(c["decision"] for c in verdict["configs"])
        if decisions != ["abstain", "equivalent", "missing", "new", "slower"]:
            failures.append(f"unexpected decisions {decisions}")
    # Content errors rnx reports by JSON path must be schema violations as well.
    checked = 0
    for case in sorted((pathlib.Path(__file__).parent / "cases").glob("*.case")):
        header, files = parse_case(case)
        message = header.get("stderr", [""])[0]
        if ": $" not in message or "duplicate configuration" in message or "counts summing" in message:
            continue  # syntax, files, options, duplicates and group sums are beyond what JSON Schema expresses
        name = message.split("rnx: error: ")[1].split(":")[0]
        doc = json.loads(files[name])
        try:
            jsonschema.validate(doc, run_schema)
            failures.append(f"{case.name}: rnx rejects {name} but the schema accepts it")
        except jsonschema.ValidationError:
            checked += 1
    print(f"schema: rnx output validates; {checked} rejected documents also rejected by the schema")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures or checked < 5 else 0


if __name__ == "__main__":
    sys.exit(main())
