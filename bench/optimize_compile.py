#!/usr/bin/env python3
"""Does `rnx optimize` keep a torch.compile rewrite? One run of the rewrite loop on the CPU.

    python3 bench/optimize_compile.py [--rnx build/bin/rnx] [--processes N]
                                      [--out bench/results/optimize_compile_cpu.json]

The original is bench/corpus/optimize/attention_heads.py (attention one head at a time); the scripted rewriter of
tests/optimize (RNX_TEST_CANDIDATE_FILES) proposes bench/corpus/optimize/compiled.py, the batched attention under
@torch.compile. The candidate must pass the verifier (torch's compiler stack imported before the guard's snapshot,
inductor compiling inside the sandbox), be benchmarked in processes of its own on fresh inputs, and be kept. The
proposal (`rnx optimize --format markdown`, what the commit and pull request carry) is written beside the JSON as
.md; the script checks it holds the benchmark and the audit table. Exit 0 when kept with both, 1 otherwise.
"""
import argparse
import json
import os
import sys
import time

from optimize_cheats import ROOT, optimize  # bench/optimize_cheats.py: one `rnx optimize` of attention_heads


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rnx", default=os.path.join(ROOT, "build", "bin", "rnx"))
    ap.add_argument("--processes", type=int, default=3, help="worker processes per side (the first look)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "optimize_compile_cpu.json"))
    args = ap.parse_args()

    record, seconds, proposal = optimize(args.rnx, "isolated", ["compiled.py"], args.processes,
                                         extra=("--format", "markdown"))
    attempt = record["attempts"][0]
    has_benchmark = "### Benchmark: candidate 1 against the original" in proposal
    has_audit = "### Correctness and anti-cheat audit" in proposal
    costs = (attempt.get("audit") or {}).get("candidate_costs")
    print(f"compiled.py: {attempt['status']}, kept {attempt['kept']}, speedup {attempt['speedup']}, "
          f"P(faster) {attempt['p_faster']}; proposal carries the benchmark: {has_benchmark}, the audit table: "
          f"{has_audit}; rnx optimize took {seconds:.0f} s")
    if costs:
        print(f"the candidate's costs in the verifier: {costs}")
    if attempt["reason"]:
        print("reason: " + attempt["reason"][:600])
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(os.path.splitext(args.out)[0] + ".md", "w") as f:
        f.write(proposal)
    with open(args.out, "w") as f:
        json.dump({"command": " ".join(sys.argv), "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                   "machine": os.uname().nodename, "cpus": os.cpu_count(), "seconds": round(seconds, 1),
                   "load_after": os.getloadavg(), "attempt": {k: attempt[k] for k in
                   ("status", "kept", "speedup", "p_faster", "reason", "audit")},
                   "proposal_has_benchmark": has_benchmark, "proposal_has_audit": has_audit}, f, indent=2)
        f.write("\n")
    return 0 if attempt["kept"] and has_benchmark and has_audit else 1


if __name__ == "__main__":
    sys.exit(main())
