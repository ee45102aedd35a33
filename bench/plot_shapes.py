#!/usr/bin/env python3
"""Plots `bench --shapes` (bench/results/<date>-shapes.csv): for each table shape, the full read's
and the update snapshot's rows/s at the defaults, with the raw MariaDB limits of the same run as
lines (quiet, and beside a busy core)."""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

src = sys.argv[1]
# The guide embeds the plots (docs/images/bench-<date>-shapes.png), so they are written there.
dst = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "docs", "images", "bench-" + os.path.basename(src).rsplit(".", 1)[0] + ".png"
)
rows = list(csv.DictReader(open(src)))


def of(group_start):
    return [r for r in rows if r["group"].startswith(group_start)]


raw = {r["name"]: float(r["rows_per_sec"]) for r in of("raw")}
panels = (
    ("shapes: full read", "full read into an empty table", "LOAD DATA LOCAL INFILE into an empty table"),
    ("shapes: a snapshot updating", "a snapshot updating every row", "multi-row ODKU; 1000 rows/statement; update"),
)
fig, axes = plt.subplots(1, 2, figsize=(13, 6), dpi=120, sharey=True)
for ax, (group, title, limit) in zip(axes, panels):
    runs = of(group)
    names = [r["name"].replace(";", ",") for r in runs]
    speeds = [float(r["rows_per_sec"]) for r in runs]
    colors = ["tab:red" if "busy" in n else ("tab:gray" if n.startswith("wide") else "tab:blue") for n in names]
    ax.barh(range(len(runs)), speeds, color=colors)
    for name, style in ((limit, "-"), (limit + "; one core kept busy", "--")):
        if name in raw:
            ax.axvline(raw[name], color="black", linestyle=style, linewidth=1,
                       label="raw limit" + (", busy core" if "busy" in name else ""))
    ax.set_yticks(range(len(runs)))
    ax.set_yticklabels([n.replace(" (median of 3)", "") for n in names], fontsize=7)
    ax.xaxis.set_major_formatter(lambda x, _: f"{x / 1000:.0f}k")
    ax.set_xlabel("rows/s, median of 3 runs (orders 1M rows; wide 100k rows, grey)")
    ax.set_title(title + ", defaults")
    ax.grid(True, axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
axes[0].invert_yaxis()  # shared: once for both
fig.suptitle("pms-worker by table shape at the defaults, beside the raw MariaDB limits (2 cores shared with MariaDB)")
fig.tight_layout()
fig.savefig(dst)
print(dst)
