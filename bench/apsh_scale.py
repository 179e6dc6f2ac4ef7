#!/usr/bin/python3
"""App Shield at scale (issue 23): bench_apsh's process list, full sweep, attestation of every
process and YARA over every process's memory, on snapshots of big test guests (tests/guest/boot
--big N, then tests/guest/snapshot), one source (raw by default). Each benchmark runs in a process
of its own, so that its peak RSS (VmHWM) is its own.

    bench/apsh_scale.py --bench build/default/bench/bench_apsh --hash-map MAP.json \\
        --snapshot build/guest-snapshots/b100 --snapshot build/guest-snapshots/b300 \\
        --snapshot build/guest-snapshots/b1000 [--repetitions 5] [--json apsh_scale.json]

MAP.json: softdpu-exec-hash-build-map -o MAP.json --root R R/bin R/lib R/lib64, R the guests'
initramfs tree (INITRAMFS_ROOT in their guest.env). Prints a markdown table (medians; wall and CPU
time, peak RSS) and writes the records as JSON for bench/plot.py (apsh_scale.svg).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SOURCES = {"raw": 0, "elf": 1, "lime": 2, "live": 3}
BENCHMARKS = [("BM_ProcessList", "process list"), ("BM_FullSweep", "full sweep"),
              ("BM_AttestAll", "attestation of every process"), ("BM_YaraAll", "YARA over every process"),
              ("BM_StartAndProcessList", "zero-config start + process list")]


def load_average():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run_one(bench, benchmark, source, snapshot, hash_map, repetitions):
    env = dict(os.environ, SOFTDPU_GUEST_SNAPSHOT=snapshot, SOFTDPU_GUEST_HASH_MAP=hash_map)
    command = [bench, f"--benchmark_filter=^{benchmark}/{SOURCES[source]}/", f"--benchmark_repetitions={repetitions}",
               "--benchmark_format=json"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed: {result.stderr[-2000:]}")
    runs = [b for b in json.loads(result.stdout)["benchmarks"] if b.get("run_type") == "iteration"]
    if not runs or any(b.get("error_occurred") for b in runs):
        message = runs[0].get("error_message") if runs else "no runs"
        raise RuntimeError(f"{benchmark} on {snapshot}: {message}")
    scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[runs[0]["time_unit"]]
    counters = {k: v for k, v in runs[-1].items() if isinstance(v, (int, float))}
    return {
        "benchmark": benchmark,
        "real_ms": statistics.median(b["real_time"] * scale for b in runs),
        "cpu_ms": statistics.median(b["cpu_time"] * scale for b in runs),
        "peak_rss_MiB": max(b["peak_rss_MiB"] for b in runs),
        "processes": int(counters.get("processes", 0)),
        "counters": counters,
    }


def guest_facts(snapshot):
    facts = {}
    with open(os.path.join(snapshot, "guest.env")) as f:
        for line in f:
            key, _, value = line.strip().partition("=")
            facts[key] = value
    return facts


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench", required=True, help="bench_apsh")
    parser.add_argument("--hash-map", required=True, help="softdpu-exec-hash-build-map output for the guests")
    parser.add_argument("--snapshot", action="append", required=True, help="a snapshot directory (repeatable)")
    parser.add_argument("--source", default="raw", choices=sorted(SOURCES))
    parser.add_argument("--repetitions", type=int, default=5)
    parser.add_argument("--json", help="write the records here")
    args = parser.parse_args()

    document = {"source": args.source, "repetitions": args.repetitions, "load_average_before": load_average(),
                "records": []}
    for snapshot in args.snapshot:
        facts = guest_facts(snapshot)
        for benchmark, _ in BENCHMARKS:
            record = run_one(args.bench, benchmark, args.source, snapshot, args.hash_map, args.repetitions)
            record.update(snapshot=snapshot, big_procs=int(facts.get("BIG_PROCS", 0) or 0),
                          mem_mib=int(facts.get("MEM_MIB", 0) or 0))
            document["records"].append(record)
            print(f"{snapshot} {benchmark}: {record['real_ms']:.1f} ms wall, {record['cpu_ms']:.1f} ms CPU, "
                  f"{record['peak_rss_MiB']:.0f} MiB", file=sys.stderr)
    document["load_average_after"] = load_average()

    by_snapshot = {}
    for r in document["records"]:
        by_snapshot.setdefault(r["snapshot"], {})[r["benchmark"]] = r
    header = ["measurement"] + [f"{rows['BM_ProcessList']['processes']} processes" for rows in by_snapshot.values()]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for benchmark, label in BENCHMARKS:
        cells = []
        for rows in by_snapshot.values():
            r = rows[benchmark]
            cells.append(f"{r['real_ms']:.1f} ms ({r['cpu_ms']:.1f} ms CPU), {r['peak_rss_MiB']:.0f} MiB")
        print(f"| {label} (`{benchmark}`) | " + " | ".join(cells) + " |")
    print(f"load average {document['load_average_before']} before, {document['load_average_after']} after")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(document, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
