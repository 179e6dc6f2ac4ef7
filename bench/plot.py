#!/usr/bin/python3
"""Draws the plots of docs/performance.md from the benchmarks' machine-readable output.

Inputs (in --results, default bench/results, or in its folders, one per set of runs: results/SET
is drawn into out/SET), each optional; a plot is drawn for each one found:

  memif.json          bench/memif_bench.py --json           -> memif_ratio.svg
  dma_placement.json  bench/dma_placement.py --json         -> dma_placement.svg
  yara.json           bench_apsh_yara --benchmark_out=FILE --benchmark_out_format=json
                      (with --benchmark_repetitions)         -> yara_window.svg
  apsh_scale.json     bench/apsh_scale.py --json FILE         -> apsh_scale.svg

    /usr/bin/python3 bench/plot.py [--results bench/results] [--out docs/plots]

Needs matplotlib (Debian: python3-matplotlib, hence /usr/bin/python3). The SVGs carry no date and
a fixed hash salt, so the same data gives the same files; their text is SVG text, not paths.
"""
import argparse
import json
import os
import re
import statistics
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
except ImportError:
    print("plot.py: matplotlib is missing (apt-get install python3-matplotlib; run with /usr/bin/python3)")
    sys.exit(1)

plt.rcParams["svg.hashsalt"] = "softdpu"
plt.rcParams["svg.fonttype"] = "none"  # text stays text: smaller files, searchable
plt.rcParams["font.size"] = 9

# The memif goals (ratio to testpmd -> testpmd): the goal column of docs/performance.md's libmemif table.
MEMIF_GOALS = {"ours -> ours": 1.2, "ours -> testpmd": 1.0, "testpmd -> ours": 1.0}

PLACEMENT_COLOURS = {"close": "tab:blue", "far": "tab:red", "mixed": "tab:gray", "descheduled": "tab:orange",
                     None: "tab:gray"}


def save(figure, path):
    figure.tight_layout()
    figure.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(figure)
    print(f"wrote {path}")


def load_note(document):
    before, after = document.get("load_average_before"), document.get("load_average_after")
    return f"load average {before.split()[0]} before, {after.split()[0]} after" if before and after else ""


def memif_points(document, size, pairing):
    """(ratio, placement) of every round of this size in which the pairing and the baseline were
    both counted."""
    return [(r["pairings"][pairing]["ratio"], r["placement"]) for r in document["records"]
            if r["size"] == size and pairing in r["pairings"] and r["pairings"][pairing].get("ratio") is not None]


def plot_memif(document, path):
    """Ratio to testpmd -> testpmd of the same round, per pairing and frame size: every round as a
    dot coloured by placement, the median of all rounds as a bar, the close / far medians as marks."""
    baseline = document["baseline_pairing"]
    pairings = [p for p in document["pairings"] if p != baseline]
    sizes = document["sizes"]
    figure, axes = plt.subplots(1, len(sizes), figsize=(4.2 * len(sizes), 3.8), sharey=True, squeeze=False)
    for axis, size in zip(axes[0], sizes):
        for x, pairing in enumerate(pairings):
            points = memif_points(document, size, pairing)
            if not points:
                continue
            axis.bar(x, statistics.median(p[0] for p in points), width=0.6, color="0.88", edgecolor="0.5",
                     label="median, all rounds" if x == 0 else None)
            for i, (ratio, where) in enumerate(points):
                jitter = (i - (len(points) - 1) / 2) * 0.3 / max(len(points), 1)
                axis.plot(x + jitter, ratio, "o", ms=3, color=PLACEMENT_COLOURS.get(where, "tab:gray"), alpha=0.7)
            for where, marker in (("close", "_"), ("far", "_")):
                chosen = [p[0] for p in points if p[1] == where]
                if chosen:
                    axis.plot(x, statistics.median(chosen), marker, ms=22, mew=2, color=PLACEMENT_COLOURS[where])
            if pairing in MEMIF_GOALS:
                axis.plot([x - 0.4, x + 0.4], [MEMIF_GOALS[pairing]] * 2, color="tab:green", lw=1.5)
        axis.axhline(1.0, color="black", lw=0.8, ls="--")
        axis.set_xticks(range(len(pairings)))
        axis.set_xticklabels([p.replace(" -> ", "\n→ ") for p in pairings])
        axis.set_title(f"{size}-byte frames")
        axis.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel(f"packets/s ÷ {baseline.replace('->', '→')} (same round)")
    present = {r["placement"] for r in document["records"]}
    names = {"close": "vCPUs close", "far": "vCPUs far apart", "mixed": "placement moved",
             "descheduled": "a probe descheduled (machine busy)", None: "no probe"}
    handles = [plt.Line2D([], [], ls="", marker="o", ms=4, color=PLACEMENT_COLOURS[w], label=f"one round: {names[w]}")
               for w in ("close", "far", "mixed", "descheduled", None) if w in present]
    handles += [plt.Line2D([], [], ls="", marker="_", ms=12, mew=2, color=PLACEMENT_COLOURS[w],
                           label=f"median of the {w} rounds") for w in ("close", "far") if w in present]
    handles.append(plt.Rectangle((0, 0), 1, 1, color="0.88", ec="0.5", label="median of all rounds"))
    handles.append(plt.Line2D([], [], color="tab:green", lw=1.5, label="goal"))
    figure.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=3)
    figure.suptitle(f"libmemif, sender → receiver: {document['rounds']} rounds of {document['slot_s']:g} s slots; "
                    f"{load_note(document)}", fontsize=9)
    save(figure, path)


def plot_dma(document, path):
    """dma_over_memcpy of each run against the core round trip measured before and after it."""
    figure, axis = plt.subplots(figsize=(6, 3.8))
    for row in document["rows"]:
        before, after = row["pingpong_before_ns"], row["pingpong_after_ns"]
        colour = PLACEMENT_COLOURS.get(row["placement"], "tab:gray")
        axis.plot([before, after], [row["dma_over_memcpy"]] * 2, "-", color=colour, lw=0.8, alpha=0.6)
        axis.plot((before * after) ** 0.5, row["dma_over_memcpy"], "o", color=colour, ms=5)
    probes = [ns for r in document["rows"] for ns in (r["pingpong_before_ns"], r["pingpong_after_ns"])]
    low, high = min(50, min(probes) / 1.5), max(1000, max(probes) * 1.5)
    axis.set_xscale("log")
    axis.set_xlim(low, high)
    steps = (1, 2, 5) if high / low <= 100 else (1,)  # 1-2-5 ticks, or decades over a wide range
    ticks = [m * 10 ** e for e in range(1, 8) for m in steps if low <= m * 10 ** e <= high]
    axis.set_xticks(ticks)
    axis.set_xticklabels([f"{t:,}" for t in ticks])
    axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    axis.set_ylim(0, max(1.25, max(r["dma_over_memcpy"] for r in document["rows"]) + 0.05))
    axis.axhline(0.9, color="black", lw=0.8, ls="--")
    axis.text(0.01, 0.9, "goal 0.9", va="bottom", ha="left", fontsize=7, transform=axis.get_yaxis_transform())
    thresholds = document.get("placement_thresholds_ns", {})
    for key, label in (("close_below", "close ←"), ("far_from", "→ far"),
                       ("descheduled_from", "→ a probe thread\n   was not running")):
        if key in thresholds and low < thresholds[key] < high:
            axis.axvline(thresholds[key], color="0.6", lw=0.6, ls=":")
            axis.text(thresholds[key], 0.99, label, fontsize=6, va="top", transform=axis.get_xaxis_transform(),
                      ha="right" if key == "close_below" else "left", color="0.4")
    axis.set_xlabel("core round trip, bench_core_pingpong (ns, log scale)\n"
                    "dot: geometric mean of the probes before and after the run; line: from one to the other")
    axis.set_ylabel("1 MiB DMA throughput ÷ memcpy")
    axis.grid(alpha=0.3)
    names = {"close": "vCPUs close", "far": "vCPUs far apart", "mixed": "placement moved",
             "descheduled": "probe descheduled (machine busy)"}
    handles = [plt.Line2D([], [], ls="", marker="o", ms=5, color=PLACEMENT_COLOURS[w], label=names[w])
               for w in ("close", "far", "mixed", "descheduled")
               if any(r["placement"] == w for r in document["rows"])]
    axis.legend(handles=handles, fontsize=7, loc="center right")
    loads = [float(r["load_average"].split()[0]) for r in document["rows"]]
    axis.set_title(f"BM_Dma1MiBVsMemcpy, {len(document['rows'])} runs of {document['min_time_s']:g} s; "
                   f"load average {min(loads):.1f}–{max(loads):.1f} as each run began", fontsize=9)
    save(figure, path)


def yara_runs(document):
    """{(benchmark, window size, step): [ratio of each repetition]} from Google Benchmark's JSON:
    the repetitions only (no aggregates), no failed run, and not the page-by-page reader (/1)."""
    runs = {}
    for bench in document["benchmarks"]:
        if bench.get("run_type") != "iteration" or "error_message" in bench or "ratio" not in bench:
            continue
        match = re.fullmatch(r"(BM_Yara\w*Ratio)/(\d+)/(\d+)(?:/(\d+))?", bench["run_name"])
        if not match or (match.group(4) not in (None, "0")):
            continue  # /1: the page-by-page reader, not a window setting
        key = (match.group(1), int(match.group(2)), int(match.group(3)))
        runs.setdefault(key, []).append(bench["ratio"])
    return runs


def plot_yara(document, path):
    """Median ratio (flat libyara time / window scan time) against the window size, windows side by
    side (step = size); overlapping settings (step < size) as separate marks; the range over the
    repetitions as error bars."""
    runs = yara_runs(document)
    if not runs:
        print("yara: no BM_Yara*Ratio runs in the file; skipped")
        return
    labels = {"BM_YaraRatio": "synthetic 64 MiB (BM_YaraRatio)",
              "BM_YaraGuestRatio": "test guest's user memory (BM_YaraGuestRatio)"}
    colours = {"BM_YaraRatio": "tab:green", "BM_YaraGuestRatio": "tab:purple"}
    figure, axis = plt.subplots(figsize=(6.4, 4.6))
    for name in ("BM_YaraRatio", "BM_YaraGuestRatio"):
        for overlapping in (False, True):
            keys = sorted(k for k in runs if k[0] == name and (k[2] < k[1]) == overlapping)
            if not keys:
                continue
            x = [k[1] for k in keys]
            medians = [statistics.median(runs[k]) for k in keys]
            low = [m - min(runs[k]) for m, k in zip(medians, keys)]
            high = [max(runs[k]) - m for m, k in zip(medians, keys)]
            style = dict(fmt="s", mfc="none", ls="") if overlapping else dict(fmt="o-")
            axis.errorbar(x, medians, yerr=[low, high], color=colours[name], capsize=2, ms=5, lw=1, **style,
                          label=labels[name] + (", step = size/2" if overlapping else ", step = size"))
    lowest = min(min(v) for v in runs.values())
    axis.set_ylim(min(0.6, lowest - 0.05), max(1.1, max(max(v) for v in runs.values()) + 0.05))
    axis.axhline(0.8, color="black", lw=0.8, ls="--")
    axis.text(0.01, 0.8, "goal 0.8", va="bottom", fontsize=7, transform=axis.get_yaxis_transform())
    axis.axvline(4096, color="0.6", lw=0.8, ls=":")
    axis.text(4096, 0.01, " DOCA's default", fontsize=7, va="bottom", color="0.4",
              transform=axis.get_xaxis_transform())
    axis.set_xscale("log", base=2)
    sizes = sorted({k[1] for k in runs})
    axis.set_xticks(sizes)
    axis.set_xticklabels([f"{s // 1024} KiB" for s in sizes])
    axis.set_xlabel("scan window size")
    axis.set_ylabel("libyara flat time ÷ window scan time")
    axis.grid(alpha=0.3)
    axis.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=1)
    repetitions = max(len(v) for v in runs.values())
    context = document.get("context", {})
    load = context.get("load_avg")
    load_text = f"; load average {load[0]:.1f} at the start" if load else ""
    axis.set_title(f"YARA window scan vs flat libyara (above 1: the window scan is faster)\n"
                   f"medians of {repetitions} repetitions, bars: min–max{load_text}", fontsize=9)
    save(figure, path)


APSH_SCALE_LABELS = {"BM_ProcessList": "process list", "BM_FullSweep": "full sweep",
                     "BM_AttestAll": "attestation of every process", "BM_YaraAll": "YARA over every process",
                     "BM_StartAndProcessList": "zero-config start + process list"}


def plot_apsh_scale(document, path):
    """Wall time and peak RSS of each App Shield benchmark against the guest's process count
    (log-log), each with a dotted line of linear growth from its smallest guest."""
    series = {}
    for r in document["records"]:
        series.setdefault(r["benchmark"], []).append((r["processes"], r["real_ms"], r["peak_rss_MiB"]))
    figure, (times, memory) = plt.subplots(1, 2, figsize=(10, 4))
    for index, (benchmark, label) in enumerate(APSH_SCALE_LABELS.items()):
        points = sorted(series.get(benchmark, []))
        if not points:
            continue
        colour = f"C{index}"
        xs = [p[0] for p in points]
        times.plot(xs, [p[1] for p in points], "o-", color=colour, label=label)
        times.plot(xs, [points[0][1] * x / xs[0] for x in xs], ":", color=colour, linewidth=1)
        memory.plot(xs, [p[2] for p in points], "o-", color=colour, label=label)
    counts = sorted({r["processes"] for r in document["records"]})
    for axis in (times, memory):
        axis.set_xscale("log")
        axis.set_xlabel("processes in the guest")
        axis.set_xticks(counts, [str(c) for c in counts])
        axis.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.grid(True, which="both", alpha=0.3)
    times.set_yscale("log")
    times.set_ylabel("wall time, median (ms); dotted: linear growth")
    memory.set_ylabel("peak RSS of the benchmark process (MiB)")
    memory.set_ylim(bottom=0)
    times.legend(fontsize=7)
    note = load_note(document)
    figure.suptitle(f"App Shield at scale ({document.get('source', 'raw')} image, {note})")
    save(figure, path)


PLOTS = [("memif.json", "memif_ratio.svg", plot_memif), ("dma_placement.json", "dma_placement.svg", plot_dma),
         ("yara.json", "yara_window.svg", plot_yara),
         ("apsh_scale.json", "apsh_scale.svg", plot_apsh_scale)]


def draw_set(results, out):
    """Draws the plots whose input is in `results` into `out`; returns how many."""
    drawn = 0
    for source, target, draw in PLOTS:
        source_path = os.path.join(results, source)
        if not os.path.exists(source_path):
            continue
        os.makedirs(out, exist_ok=True)
        with open(source_path) as data:
            draw(json.load(data), os.path.join(out, target))
        drawn += 1
    return drawn


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", default=os.path.join(here, "results"), help="input folder (bench/results)")
    parser.add_argument("--out", default=os.path.normpath(os.path.join(here, "..", "docs", "plots")),
                        help="output folder (docs/plots)")
    args = parser.parse_args()
    if not os.path.isdir(args.results):
        print(f"{args.results}: no such folder")
        return 1
    # The folder itself, then each set of runs in a folder of its own (results/SET -> out/SET).
    sets = [(args.results, args.out)] + [
        (os.path.join(args.results, name), os.path.join(args.out, name)) for name in sorted(os.listdir(args.results))
        if os.path.isdir(os.path.join(args.results, name))]
    drawn = sum(draw_set(results, out) for results, out in sets)
    if not drawn:
        print(f"{args.results}: none of {', '.join(p[0] for p in PLOTS)} here or in a folder below")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
