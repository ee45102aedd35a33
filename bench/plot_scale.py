#!/usr/bin/env python3
"""Plots the scale grid of `bench --scale` (bench/results/<date>-scale.csv): the full read's rows/s
and peak RSS against the slot count, one line per table size, row width and bucket count."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

src = sys.argv[1]
# The guide embeds the plots (docs/images/bench-<date>-<size>.png), so they are written there.
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "docs", "images", "bench-" + os.path.basename(src).rsplit(".", 1)[0] + ".png"
)
rows = list(csv.DictReader(open(src)))
fig, (speed, memory) = plt.subplots(1, 2, figsize=(11, 4.5), dpi=120)
lines = sorted({(int(r["rows"]), int(r["columns"]), int(r["buckets"])) for r in rows})
for size, columns, buckets in lines:
    pts = sorted(
        (int(r["slots"]), float(r["rows_per_sec"]), float(r["peak_rss_mib"]))
        for r in rows
        if (int(r["rows"]), int(r["columns"]), int(r["buckets"])) == (size, columns, buckets)
    )
    label = f"{size:,} rows × {columns} columns, {buckets} bucket{'s' if buckets > 1 else ''}"
    speed.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
    memory.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=label)
for ax, title, unit in ((speed, "full read throughput", "rows/s"), (memory, "peak RSS per worker", "MiB")):
    ax.set_xticks([1, 2, 4])
    ax.set_xlabel("slots (worker processes)")
    ax.set_ylabel(unit)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.set_ylim(bottom=0)
speed.legend(fontsize=7)
fig.suptitle("pms-worker full read by table size, row width, buckets and slots (2 cores shared with MariaDB)")
fig.tight_layout()
fig.savefig(dst)
print(dst)
