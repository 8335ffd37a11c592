#!/usr/bin/env python3
"""Summarizes Nsight Compute's source page (`ncu -i REPORT --page source --csv --print-source sass`, on stdin) for
the profile stage of device_batch.sh: the whole page is megabytes per launch, so per launch it keeps

  - the basic blocks (runs of instructions executed the same number of times) that execute the most instructions,
    with their share of the launch's instructions and stall samples: where a kernel's issue slots go;
  - the 60 instructions with the most stall samples: where its warps wait;

and, with --full DIR, the whole listing (index, executions, samples, SASS) of the two launches that executed the most
instructions, one file each (they compress well)."""
import argparse
import csv
import os
import sys


def number(text):
    text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return 0.0


def launches(rows):
    cut = [i for i, r in enumerate(rows) if r and r[0] == "Kernel Name"] + [len(rows)]
    for a, b in zip(cut, cut[1:]):
        header = rows[a + 1] if a + 1 < len(rows) else []
        if "Warp Stall Sampling (All Samples)" not in header or "Instructions Executed" not in header:
            continue
        body = [r for r in rows[a + 2:b] if len(r) == len(header)]
        s, e = header.index("Warp Stall Sampling (All Samples)"), header.index("Instructions Executed")
        yield rows[a][1], [(number(r[e]), number(r[s]), r[1].strip()) for r in body]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", help="directory for the full listings of the two largest launches")
    args = ap.parse_args()
    out = sys.stdout
    found = list(launches(list(csv.reader(sys.stdin))))
    for name, body in found:
        executed = sum(e * 1.0 for e, _, _ in body) or 1.0
        samples = sum(s for _, s, _ in body) or 1.0
        out.write("== %s: %d instructions, %d stall samples, %d warp instructions executed\n"
                  % (name[:90], len(body), samples, executed))
        blocks, start = [], 0
        for k in range(1, len(body) + 1):
            if k == len(body) or body[k][0] != body[start][0]:
                if body[start][0] > 0:
                    blocks.append((start, k - start, body[start][0], sum(s for _, s, _ in body[start:k])))
                start = k
        out.write("  basic blocks by instructions executed: first index, length, executions, share of the launch's "
                  "instructions, share of its samples, first instructions\n")
        for first, length, count, smp in sorted(blocks, key=lambda b: -b[1] * b[2])[:25]:
            ops = "; ".join(t.split()[0] if not t.startswith("@") else " ".join(t.split()[:2]) for _, _, t in
                            body[first:first + 4])
            out.write("  %5d %4d %10d %6.1f%% %6.1f%%  %s\n"
                      % (first, length, count, 100 * length * count / executed, 100 * smp / samples, ops[:90]))
        out.write("  instructions by stall samples: index, share of samples, executions, SASS\n")
        for k, (e, s, text) in sorted(enumerate(body), key=lambda t: -t[1][1])[:60]:
            out.write("  %5d %6.1f%% %10d  %s\n" % (k, 100 * s / samples, e, text[:110]))
    if args.full and found:
        os.makedirs(args.full, exist_ok=True)
        largest = sorted(range(len(found)), key=lambda i: -sum(e for e, _, _ in found[i][1]))[:2]
        for rank, i in enumerate(largest):
            with open(os.path.join(args.full, "sass_%d.txt" % rank), "w") as f:
                f.write("# %s\n# index executions samples SASS\n" % found[i][0])
                for k, (e, s, text) in enumerate(found[i][1]):
                    f.write("%5d %10d %6d  %s\n" % (k, e, s, text))


if __name__ == "__main__":
    main()
