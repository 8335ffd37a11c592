#!/usr/bin/env python3
"""Plot the SpGEMM benchmark: GFLOPS against intermediate products, one series per method.

usage: plot_bench.py [CSV] [PNG]     (defaults: build/bench/bench.csv, the CSV's name with .png)

Reads the CSV of bench_spgemm (one row per matrix and method).  Two panels share the x axis: end-to-end products
(ours, cuSPARSE ALG1-3) and numeric-only products (ours, cusparseSpGEMMreuse).  Successful runs are points joined
in order of products; failed or skipped runs are crosses on the x axis (GFLOPS 0) labelled with their status;
methods that were not available ("n/a") are left out.  Each matrix is named once along the top.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # no display on the machines this runs on
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {  # method: (label, marker, colour): ours and cuSPARSE's reuse keep their colours across panels
    "ocean": ("ocean", "o", "C3"),
    "cusparse_alg1": ("cuSPARSE ALG1", "s", "C0"),
    "cusparse_alg2": ("cuSPARSE ALG2", "^", "C1"),
    "cusparse_alg3": ("cuSPARSE ALG3", "v", "C2"),
    "ocean_reuse": ("ocean", "o", "C3"),
    "cusparse_reuse": ("cuSPARSE reuse", "P", "C4"),
}
# Numeric-only times are an order of magnitude faster: their own panel keeps the end-to-end series readable.
PANELS = [
    ("end-to-end product", ["ocean", "cusparse_alg1", "cusparse_alg2", "cusparse_alg3"]),
    ("numeric-only (structure reused)", ["ocean_reuse", "cusparse_reuse"]),
]


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_method(rows):
    """{method: ([(products, gflops)], [(products, status)])}"""
    series = {}
    for r in rows:
        ok, failed = series.setdefault(r["method"], ([], []))
        products = float(r["products"])
        if r["status"] == "ok":
            ok.append((products, float(r["gflops"])))
        elif r["status"] != "n/a":
            failed.append((products, r["status"]))
    return series


def short_status(status):
    """fail(CUSPARSE_STATUS_INSUFFICIENT_RESOURCES) -> INSUFFICIENT_RESOURCES"""
    return status.replace("CUSPARSE_STATUS_", "").replace("fail(", "").replace("skip(", "skip ").rstrip(")")


def plot_panel(ax, title, methods, series):
    """Successful runs as lines; failures as crosses on the x axis, nudged apart, labelled once per status."""
    failures = {}  # products: {status: [method label, ...]}
    for k, method in enumerate(methods):
        ok, failed = series.get(method, ([], []))
        label, marker, color = STYLE.get(method, (method, "o", f"C{5 + k}"))
        if ok:
            ok.sort()
            ax.plot([p for p, _ in ok], [g for _, g in ok], marker=marker, linewidth=1, color=color, label=label)
        for i, (p, status) in enumerate(failed):
            ax.plot(p * (1 + 0.035 * k), 0, marker="x", markersize=9, mew=2, color=color, linestyle="none", clip_on=False,
                    label=f"{label}: failed" if i == 0 and not ok else None)
            failures.setdefault(p, {}).setdefault(short_status(status), []).append(label.replace("cuSPARSE ", ""))
    for p, statuses in failures.items():
        text = "\n".join(f"{', '.join(who)}: {status}" for status, who in statuses.items())
        ax.annotate(text, (p, 0), textcoords="offset points", xytext=(-2, 10), rotation=90, ha="center", va="bottom",
                    fontsize=7, color="0.25")
    ax.set_ylabel(f"{title}\nGFLOPS (2 x products / median time)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", axis="y", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))


def plot(rows, png):
    series = by_method(rows)
    fig, axes = plt.subplots(2, 1, figsize=(11, 9), sharex=True)
    for ax, (title, methods) in zip(axes, PANELS):
        plot_panel(ax, title, methods, series)
    matrices = {}
    for r in rows:  # each matrix named once, at its products
        matrices.setdefault(r["matrix"], float(r["products"]))
    for ax in axes:
        for p in matrices.values():
            ax.axvline(p, color="0.88", linewidth=0.8, zorder=0)
    for name, p in matrices.items():
        axes[0].annotate(name, (p, 1), xycoords=("data", "axes fraction"), xytext=(0, 4), textcoords="offset points",
                         rotation=60, ha="left", va="bottom", fontsize=7, color="0.35")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("intermediate products (log)")
    fig.suptitle("SpGEMM C = A*B (failures: x on the axis)", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=130)


def main(argv):
    path = argv[1] if len(argv) > 1 else "build/bench/bench.csv"
    png = argv[2] if len(argv) > 2 else os.path.splitext(path)[0] + ".png"
    rows = read_rows(path)
    if not rows:
        sys.exit(f"plot_bench: {path} has no results")
    plot(rows, png)
    print(f"plot: {png}")


if __name__ == "__main__":
    main(sys.argv)
