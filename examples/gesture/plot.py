#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""plot.py CSV PNG [TITLE] - the gesture demo's results as one PNG.

Reads the rows `gesture run --csv` appended (one per implementation and
mode) and draws four panels, realtime and unconstrained side by side for
each implementation: frames per second, latency capture -> event (median
bar, 99th percentile whisker), CPU (user + system, percent of one core),
and memory (proportional set size, MB).  Needs python3-matplotlib
(`make deps` installs it); exits 1 with a message without it.
"""
import csv
import sys


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"{path}: no rows")
    return rows


def main(argv):
    if len(argv) not in (3, 4):
        print("usage: plot.py CSV PNG [TITLE]", file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: python3-matplotlib is not installed ('make deps')",
              file=sys.stderr)
        return 1
    try:
        rows = load(argv[1])
    except (OSError, ValueError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 1
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    modes = ["realtime", "unconstrained"]
    colors = {"realtime": "#4c72b0", "unconstrained": "#dd8452"}

    def value(impl, mode, key):
        for r in rows:
            if r["impl"] == impl and r["mode"] == mode:
                return float(r[key])
        return None

    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    panels = [
        (axes[0][0], "fps", "frames per second", None),
        (axes[0][1], "lat_med_ms", "latency capture -> event (ms; whisker: p99)",
         "lat_p99_ms"),
        (axes[1][0], "cpu_user_pct", "CPU, % of one core (hatched: system)",
         "cpu_sys_pct"),
        (axes[1][1], "mem_mb", "memory (PSS, MB)", None),
    ]
    width = 0.38
    for ax, key, label, extra in panels:
        for m, mode in enumerate(modes):
            xs, ys, es, ss = [], [], [], []
            for i, impl in enumerate(impls):
                v = value(impl, mode, key)
                if v is None:
                    continue
                xs.append(i + (m - 0.5) * width)
                ys.append(v)
                if extra == "lat_p99_ms":
                    es.append(max(0.0, value(impl, mode, extra) - v))
                elif extra == "cpu_sys_pct":
                    ss.append(value(impl, mode, extra))
            if not xs:
                continue
            if es:
                ax.bar(xs, ys, width, color=colors[mode], label=mode,
                       yerr=[[0] * len(es), es], capsize=3)
            else:
                ax.bar(xs, ys, width, color=colors[mode], label=mode)
            if ss:
                ax.bar(xs, ss, width, bottom=ys, color=colors[mode],
                       hatch="//", alpha=0.5)
        if key == "fps":
            ax.axhline(30, color="gray", linestyle=":", linewidth=1)
        ax.set_title(label, fontsize=10)
        ax.set_xticks(range(len(impls)))
        ax.set_xticklabels(impls)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].legend(fontsize=9)
    backend = rows[0]["backend"]
    fig.suptitle(argv[3] if len(argv) == 4 else f"gesture pipeline ({backend})")
    fig.tight_layout()
    try:
        fig.savefig(argv[2], dpi=100)
    except OSError as e:
        print(f"plot.py: {argv[2]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
