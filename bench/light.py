#!/usr/bin/env python3
"""The speed-of-light table of a suite, sorted: every measured configuration of one `rnx bench` summary with its
fraction of the machine's measured peak (`SOL`) and of the datasheet's (`sheet`), nearest the limit first.

The numbers are the summary's own (rnx bench computes them, rnx/common/speed_of_light.hpp); this script only reads
its table and sorts it, so the table here and the one rnx prints never disagree.

    rnx bench --config bench/corpus/rnx.gpu.toml --out run.json 2> bench.log
    python3 bench/light.py bench.log [--json light.json]
"""
import argparse
import json
import re
import sys

# The summary's columns (runner/src/bench.cpp, print_summary): where each starts and ends.
COLUMNS = {"configuration": (0, 44), "status": (44, 54), "median_ms": (54, 66), "gflop_per_s": (97, 107),
           "gb_per_s": (107, 117), "sol": (117, 128), "sheet": (128, 139)}
HEADER = re.compile(r"^configuration\s+status\s+median ms")
FRACTION = re.compile(r"^(>?)(\d+(?:\.\d+)?)% (flop|mem|elem)$")  # ">9999%": past a hundred times the limit


def fraction(cell):
    m = FRACTION.match(cell.strip())
    return (float(m.group(2)) / 100, m.group(3)) if m else (None, None)


def rows_of(lines):
    rows, inside = [], False
    for line in lines:
        if HEADER.match(line):
            inside = True
            continue
        if not inside:
            continue
        if line.startswith("median ms:") or not line.strip():
            inside = False
            continue
        cell = {k: line[a:b].strip() for k, (a, b) in COLUMNS.items()}
        if cell["status"] != "ok":
            continue
        sol, bound = fraction(cell["sol"])
        sheet, _ = fraction(cell["sheet"])
        rows.append({"config": cell["configuration"], "median_ms": cell["median_ms"], "gflop_per_s": cell["gflop_per_s"],
                     "gb_per_s": cell["gb_per_s"], "bound": bound, "sol": sol, "sheet": sheet})
    return rows


def pct(v):
    return "-" if v is None else f"{100 * v:.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", help="what rnx bench printed on stderr")
    ap.add_argument("--json", help="also write the sorted rows here")
    a = ap.parse_args()
    with open(a.log, errors="replace") as f:
        rows = rows_of(f.read().splitlines())
    if not rows:
        print(f"light: no summary table in {a.log}", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: -1 if r["sol"] is None else r["sol"], reverse=True)
    print(f"{'configuration':<44}{'bound':>7}{'median ms':>12}{'GFLOP/s':>10}{'GB/s':>10}{'SOL':>9}{'sheet':>9}")
    for r in rows:
        print(f"{r['config']:<44}{r['bound'] or '-':>7}{r['median_ms']:>12}{r['gflop_per_s']:>10}{r['gb_per_s']:>10}"
              f"{pct(r['sol']):>9}{pct(r['sheet']):>9}")
    known = [r for r in rows if r["sol"] is not None]
    print(f"light: {len(rows)} measured, {len(known)} with a speed of light; over 100% of the measured peak: "
          f"{sum(1 for r in known if r['sol'] > 1)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
