#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""bench/fastpath_plot.py RESULTS PNG [TITLE] - plot bench/fastpath-run.sh's
result lines ($OUT/fastpath-results.txt: "P11 k=.. bytes=.. key=value ...").

Two panels.  Left, P11: microseconds per ptask of a chain of k GPU
ptasks (4 B) against k, for ptask in each isolation the run measured and
for the raw baselines of the same run (one stream with copies, k
launches alone, a CUDA graph of the chain replayed), with issue 12's
goal (1 us a ptask at k = 100).  Right, P1b: invocations per second of
each ptask variant against the raw back-to-back launches and the raw
copy pipeline, with the goals (0.6x and 1.5x of those).  Needs
matplotlib (Debian: python3-matplotlib)."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def parse(path):
    """Each result line as (part, {key: value}); values float when they are."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            if not words or words[0] not in ("P1", "P1B", "P11"):
                continue
            kv = {}
            for w in words[1:]:
                if "=" not in w:
                    continue
                k, v = w.split("=", 1)
                try:
                    kv[k] = float(v)
                except ValueError:
                    kv[k] = v
            rows.append((words[0], kv))
    return rows


def p11_panel(ax, rows):
    isos = sorted({kv.get("iso", "") for p, kv in rows if p == "P11"})
    raw_done = False
    for iso in isos:
        pts = sorted((kv["k"], kv) for p, kv in rows
                     if p == "P11" and kv.get("iso", "") == iso and
                     kv.get("bytes") == 4 and "ptask_per_ptask_us" in kv)
        if not pts:
            continue
        ks = [k for k, _ in pts]
        ax.plot(ks, [kv["ptask_per_ptask_us"] for _, kv in pts], "o-",
                label="ptask (%s)" % (iso or "?"))
        if raw_done:
            continue
        raw_done = True
        for key, label, style in (
                ("stream_per_node_us", "raw: one stream, copies", "s--"),
                ("launch_per_node_us", "raw: k launches", "^--"),
                ("graph_per_node_us", "raw: CUDA graph replayed", "v--")):
            ys = [(k, kv[key]) for k, kv in pts if key in kv]
            if ys:
                ax.plot([k for k, _ in ys], [y for _, y in ys], style,
                        label=label)
    ax.axhline(1.0, color="grey", linestyle=":", label="goal at k = 100")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chain length k (4 B datablocks)")
    ax.set_ylabel("us per ptask (median round / k)")
    ax.set_title("P11: chains")
    ax.legend(fontsize=7)


def p1b_panel(ax, rows):
    bars, labels = [], []
    raw = {}
    for p, kv in rows:
        if p != "P1B" or "ptask_per_s" not in kv:
            continue
        bars.append(kv["ptask_per_s"] / 1000.0)
        labels.append("%s\n%s" % (kv.get("variant", "?"), kv.get("iso", "")))
        for key in ("b2b_per_s", "pipe_per_s"):
            if key in kv:
                raw.setdefault(key, kv[key])
    ax.bar(range(len(bars)), bars, color="tab:blue", label="ptask")
    ax.set_xticks(range(len(bars)))
    ax.set_xticklabels(labels, fontsize=7)
    if "b2b_per_s" in raw:
        ax.axhline(raw["b2b_per_s"] / 1000.0, color="tab:red",
                   label="raw back-to-back launches")
        ax.axhline(0.6 * raw["b2b_per_s"] / 1000.0, color="tab:red",
                   linestyle=":", label="goal: 0.6x of those")
    if "pipe_per_s" in raw:
        ax.axhline(raw["pipe_per_s"] / 1000.0, color="tab:green",
                   label="raw copy pipeline")
        ax.axhline(1.5 * raw["pipe_per_s"] / 1000.0, color="tab:green",
                   linestyle=":", label="goal: 1.5x of that")
    ax.set_ylabel("thousand invocations / s")
    ax.set_title("P1b: 64 in flight")
    ax.legend(fontsize=7)


def main(argv):
    if len(argv) not in (3, 4):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    rows = parse(argv[1])
    if not any(p == "P11" for p, _ in rows) and \
       not any(p == "P1B" for p, _ in rows):
        print("fastpath_plot.py: no P11 or P1B lines in %s" % argv[1],
              file=sys.stderr)
        return 1
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    p11_panel(left, rows)
    p1b_panel(right, rows)
    if len(argv) == 4:
        fig.suptitle(argv[3], fontsize=9)
    fig.tight_layout()
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
