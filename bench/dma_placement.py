#!/usr/bin/env python3
"""1 MiB DMA against memcpy, by vCPU placement: bench_dma's BM_Dma1MiBVsMemcpy between two probes.

On a shared VM the two vCPUs move between close (core round trip under ~200 ns) and far apart
(~350 ns and more) every few seconds, and the 1 MiB DMA ratio follows (docs/performance.md). Each
run measures the core round trip with bench_core_pingpong, runs BM_Dma1MiBVsMemcpy once (its own
JSON output, --benchmark_out), then measures the round trip again, and records the three with the
load average. bench/plot.py draws the result (dma_over_memcpy against the round trip).

    bench/dma_placement.py --bench-dma build/default/bench/bench_dma \\
        --probe build/default/bench/bench_core_pingpong [--runs 12] [--min-time 1] [--json FILE] [--csv FILE]

Without --json and --csv it prints the rows only.
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys
import tempfile

# The thresholds bench/memif_bench.py uses for the same probe. A round trip far above the far
# placement's (355-700 ns on the VMs measured so far) means that one of the probe's two threads was
# not running: the machine is busy, and the probe says nothing about the placement.
CLOSE_BELOW_NS = 200
FAR_FROM_NS = 300
DESCHEDULED_FROM_NS = 1500

FIELDS = ["run", "load_average", "pingpong_before_ns", "pingpong_after_ns", "placement", "dma_over_memcpy",
          "dma_GBps", "memcpy_GBps"]


def load_average():
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def core_round_trip(probe, seconds):
    return int(subprocess.check_output([probe, str(seconds)], text=True).strip())


def placement(before, after):
    """close / far when both probes agree, descheduled when either probe's threads could not both
    run, mixed otherwise."""
    if max(before, after) >= DESCHEDULED_FROM_NS:
        return "descheduled"
    kinds = {"close" if ns < CLOSE_BELOW_NS else "far" if ns >= FAR_FROM_NS else "mixed" for ns in (before, after)}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def dma_run(bench_dma, min_time, workdir):
    """One BM_Dma1MiBVsMemcpy run; returns its counters from the benchmark's own JSON output."""
    out = os.path.join(workdir, "dma.json")
    completed = subprocess.run([bench_dma, "--benchmark_filter=^BM_Dma1MiBVsMemcpy(/|$)", f"--benchmark_min_time={min_time}",
                    f"--benchmark_out={out}", "--benchmark_out_format=json"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{bench_dma} failed ({completed.returncode}): {completed.stderr.strip()}")
    if not os.path.exists(out) or os.path.getsize(out) == 0:
        raise RuntimeError(f"{bench_dma} wrote no result (no BM_Dma1MiBVsMemcpy in this build?)")
    with open(out) as result:
        document = json.load(result)
    os.unlink(out)
    runs = [b for b in document["benchmarks"] if b.get("run_type", "iteration") == "iteration"]
    if len(runs) != 1 or "error_message" in runs[0]:
        raise RuntimeError(f"BM_Dma1MiBVsMemcpy: unexpected output {runs}")
    return runs[0], document.get("context", {})


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dma", required=True, help="bench_dma")
    parser.add_argument("--probe", required=True, help="bench_core_pingpong")
    parser.add_argument("--runs", type=int, default=12, help="number of runs (default 12)")
    parser.add_argument("--min-time", type=float, default=1.0, help="--benchmark_min_time per run (default 1 s)")
    parser.add_argument("--probe-time", type=float, default=0.2, help="seconds per probe (default 0.2)")
    parser.add_argument("--json", metavar="FILE", help="write the runs as JSON (bench/plot.py)")
    parser.add_argument("--csv", metavar="FILE", help="write the runs as CSV")
    args = parser.parse_args()
    for tool in (args.bench_dma, args.probe):
        if not os.access(tool, os.X_OK):
            print(f"{tool}: not an executable (build bench_dma and bench_core_pingpong)")
            return 1
    if os.cpu_count() < 2:
        print("need at least 2 CPUs")
        return 1
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_average()
    rows, context = [], {}
    print(f"load average before: {load_before}", flush=True)
    with tempfile.TemporaryDirectory(prefix="softdpu-dma-placement.") as workdir:
        for run in range(1, args.runs + 1):
            load = load_average()
            before = core_round_trip(args.probe, args.probe_time)
            counters, context = dma_run(args.bench_dma, args.min_time, workdir)
            after = core_round_trip(args.probe, args.probe_time)
            row = {"run": run, "load_average": load, "pingpong_before_ns": before, "pingpong_after_ns": after,
                   "placement": placement(before, after), "dma_over_memcpy": counters["dma_over_memcpy"],
                   "dma_GBps": counters["dma_GBps"], "memcpy_GBps": counters["memcpy_GBps"]}
            rows.append(row)
            print(f"run {run:>2}/{args.runs}: core round trip {before}/{after} ns ({row['placement']}), "
                  f"dma_over_memcpy {row['dma_over_memcpy']:.2f} (DMA {row['dma_GBps']:.1f} GB/s, "
                  f"memcpy {row['memcpy_GBps']:.1f} GB/s), load average {load}", flush=True)
    load_after = load_average()
    print(f"load average after: {load_after}")
    if args.json:
        document = {
            "benchmark": "dma_placement", "started_utc": started.isoformat(timespec="seconds"),
            "load_average_before": load_before, "load_average_after": load_after,
            "runs": args.runs, "min_time_s": args.min_time, "probe_time_s": args.probe_time,
            "placement_thresholds_ns": {"close_below": CLOSE_BELOW_NS, "far_from": FAR_FROM_NS,
                                        "descheduled_from": DESCHEDULED_FROM_NS},
            "host": {key: context.get(key) for key in ("host_name", "num_cpus", "mhz_per_cpu", "library_build_type")},
            "rows": rows,
        }
        with open(args.json, "w") as out:
            json.dump(document, out, indent=1)
            out.write("\n")
        print(f"wrote {args.json}")
    if args.csv:
        with open(args.csv, "w", newline="") as out:
            writer = csv.DictWriter(out, fieldnames=FIELDS)
            writer.writeheader()
            writer.writerows(rows)
        print(f"wrote {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
