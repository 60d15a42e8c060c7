#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/encfs_plot.py CSV PNG [LABELS] - plot bench/encfs_bench.sh's CSV.

Four panels: MB/s of the sequential and dd workloads, seconds of the
tarball workloads, and the CPU seconds (FUSE daemon + ptaskd, ptaskd's
share hatched) of each.  LABELS: lines "row=label" (bench/encfs_bench.sh
passes them).  Needs matplotlib (Debian: python3-matplotlib)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def wl_name(w):
    if w.startswith("seqw"):
        return "write %s MB" % w[4:]
    if w.startswith("seqr"):
        return "read %s MB" % w[4:]
    return {"ddw": "dd write\n128K x N", "ddr": "dd read\n128K x N"}.get(w, w)


def grouped(ax, rows, wls, get, labels, ylabel, title, hatch_get=None):
    width = 0.8 / max(len(rows), 1)
    for i, r in enumerate(rows):
        xs = [j + (i - (len(rows) - 1) / 2) * width for j in range(len(wls))]
        ys = [get(r, w) for w in wls]
        # one colour per row in every panel, hatching or not
        ax.bar(xs, ys, width, label=labels.get(r, r), color="C%d" % i)
        if hatch_get:
            hs = [hatch_get(r, w) for w in wls]
            if any(hs):
                ax.bar(xs, hs, width, fill=False, hatch="//", edgecolor="black")
    ax.set_xticks(range(len(wls)))
    ax.set_xticklabels([wl_name(w) for w in wls], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="y", alpha=0.3)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    labels = {}
    if len(sys.argv) > 3:
        for line in sys.argv[3].splitlines():
            if "=" in line:
                k, v = line.split("=", 1)
                labels[k] = v
    data, rows, wls = {}, [], []
    with open(sys.argv[1]) as f:
        for rec in csv.DictReader(f):
            r, w = rec["row"], rec["workload"]
            if r not in rows:
                rows.append(r)
            if w not in wls:
                wls.append(w)
            data[r, w] = rec
    if not rows:
        sys.exit("encfs_plot: no data in " + sys.argv[1])
    tput = [w for w in wls if data.get((rows[0], w), {}).get("mb_s")
            or any(data.get((r, w), {}).get("mb_s") for r in rows)]
    timed = [w for w in wls if w not in tput]

    def num(r, w, k):
        v = data.get((r, w), {}).get(k, "")
        return float(v) if v else 0.0

    def cpu(r, w):
        return num(r, w, "cpu_fs_s") + num(r, w, "cpu_ptaskd_s")

    panels = [(tput, "MB/s", lambda r, w: num(r, w, "mb_s"),
               "throughput (higher is better)", None),
              (timed, "seconds", lambda r, w: num(r, w, "seconds"),
               "kernel source tree: time (lower is better)", None),
              (tput, "CPU seconds", cpu,
               "CPU seconds, FUSE daemon + ptaskd (hatched)", lambda r, w: num(r, w, "cpu_ptaskd_s")),
              (timed, "CPU seconds", cpu,
               "CPU seconds, FUSE daemon + ptaskd (hatched)", lambda r, w: num(r, w, "cpu_ptaskd_s"))]
    panels = [p for p in panels if p[0]]
    ncol = 2 if len(panels) > 2 else 1
    nrow = (len(panels) + ncol - 1) // ncol
    fig, axes = plt.subplots(nrow, ncol, figsize=(7 * ncol, 4 * nrow), squeeze=False)
    for ax, (ws, yl, get, title, hatch) in zip(axes.flat, panels):
        grouped(ax, rows, ws, get, labels, yl, title, hatch)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=8)
    title = "encfs-gpu vs gocryptfs vs encfs"
    if len(sys.argv) > 4:
        title += " - " + sys.argv[4]
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100)


if __name__ == "__main__":
    main()
