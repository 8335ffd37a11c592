#!/usr/bin/env python3
"""The ab stage's table (tests/gpu/device_batch.sh): bench_spgemm's CSVs of the bundle's build (head), of the base
commit's (base) and of the bundle's variants (VARIANT), ab_{head,base,VARIANT}_ROUND.csv in DIR, run in turns; per
matrix the median over the rounds of ours (the full product) and of our numeric-only reuse, and base / head (above 1:
head is faster), then base / VARIANT for each variant.  Usage: ab_table.py DIR BASE"""
import csv, glob, math, os, statistics, sys

d, base_rev = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "base"
runs = {}  # (version, method) -> matrix -> [ms per round]
bad = set()
for path in sorted(glob.glob(os.path.join(d, "ab_*_*.csv"))):
    version = os.path.basename(path).split("_")[1]
    for row in csv.DictReader(open(path)):
        if row["method"] not in ("ocean", "ocean_reuse") or not row["ms"]:
            continue
        if row["method"] == "ocean" and row["verified"] != "yes":
            bad.add((version, row["matrix"]))
        runs.setdefault((version, row["method"]), {}).setdefault(row["matrix"], []).append(float(row["ms"]))

versions = sorted({v for v, _ in runs} - {"base"}, key=lambda v: (v != "head", v))
for version in versions:
    for method, title in (("ocean", "product"), ("ocean_reuse", "numeric-only reuse")):
        ours, base = runs.get((version, method), {}), runs.get(("base", method), {})
        names = [m for m in ours if m in base]
        if not names:
            continue
        print("%s, ms (median of the rounds; the rounds in brackets), base = %s" % (title, base_rev))
        print("%-22s %-28s %-28s %s" % ("matrix", "base", version, "base/" + version))
        logs = []
        for m in names:
            b, h = statistics.median(base[m]), statistics.median(ours[m])
            logs.append(math.log(b / h))
            print("%-22s %8.3f %-19s %8.3f %-19s %9.3fx" % (m, b, "(" + ", ".join("%.3f" % x for x in base[m]) + ")", h,
                                                           "(" + ", ".join("%.3f" % x for x in ours[m]) + ")", b / h))
        print("%-22s %68.3fx  (geometric mean over %d)" % ("all", math.exp(sum(logs) / len(logs)), len(logs)))
        print()
for version, m in sorted(bad):
    print("NOT VERIFIED: %s %s" % (version, m))
