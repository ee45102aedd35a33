#!/usr/bin/env python3
"""Plots rows/s against maxRows from a bench CSV (bench/results/<date>-<size>.csv) into a PNG."""
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
fig, ax = plt.subplots(figsize=(8, 4.8), dpi=120)
for group, marker in (("worker: full read into an empty table", "o"), ("worker: one large snapshot of changes", "s")):
    pts = sorted((int(r["max_rows"]), float(r["rows_per_sec"])) for r in rows if r["group"] == group and int(r["max_rows"]) > 0)
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, label=group.replace("worker: ", "pms-worker, "))
for r in rows:
    if r["group"].startswith("raw"):
        ax.axhline(float(r["rows_per_sec"]), linestyle="--", linewidth=1, color="grey")
        ax.annotate(r["name"], (100, float(r["rows_per_sec"])), fontsize=7, color="dimgrey", va="bottom")
ax.set_xscale("log")
ax.set_xlabel("sink.maxRows (input records per flush)")
ax.set_ylabel("rows/s")
ax.set_title("pms-worker throughput vs batch size (dashed: raw MariaDB limits, same run)")
ax.grid(True, which="both", alpha=0.3)
ax.legend(loc="lower right", fontsize=8)
fig.tight_layout()
fig.savefig(dst)
print(dst)
