#!/usr/bin/env python3
"""libmemif throughput: our generator/sink ("softdpu memif gen|sink") against DPDK testpmd.

Four pairings, sender -> receiver, all in the same run and interleaved so that machine noise hits
them alike: ours -> ours, ours -> testpmd, testpmd -> ours, testpmd -> testpmd. The receiver is
the memif server on CPU 0, the sender the client on CPU 1 (copy mode on both sides, bursts of 32,
1024-slot rings, 2048-byte buffers). For every run the receiver's per-second rate samples inside
the measuring window give the rate (median of the samples), and /proc/<pid>/stat (utime + stime)
gives the CPU share each side obtained in that window. Results: median over the repeats, and
the median of all per-second samples of all repeats pooled ("pooled"): on a shared VM the
core-to-core latency moves between about 100 and 450 ns from one second to the next (wherever
the host puts the two vCPUs), so long windows and the pooled samples give steadier figures than a
few short runs.

    bench/memif_bench.py --softdpu build/tools/softdpu [--sizes 64,1500] [--repeats 5]
                         [--probe build/bench/bench_core_pingpong]

With --baseline OTHER_SOFTDPU a fifth pairing, base -> base, runs another build of our
generator/sink (e.g. before a change) interleaved with the rest. The load average is printed
before and after the run: the figures mean little when the machine is busy with other work.
"""
import argparse
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Side:
    """One process of a pairing: ours (softdpu memif) or testpmd."""

    def __init__(self, kind, role, cpu, size, socket, softdpu, workdir, name):
        self.kind, self.role, self.cpu, self.name = kind, role, cpu, name
        self.log_path = os.path.join(workdir, f"{name}.log")
        self.prefix = None
        if kind in SOFTDPU_KINDS:
            softdpu = softdpu[kind]
            application = "sink" if role == "server" else "gen"
            command = ["taskset", "-c", str(cpu), softdpu, "memif", application, "--role", role, "--socket", socket,
                       "--quiet", "--connect-timeout", "20"]
            if application == "sink":
                command += ["--interval", "1", "--verify", "header", "--burst", "32"]
            else:
                command += ["--size", str(size), "--burst", "32"]
        else:
            self.prefix = f"softdpu_bench_{os.getpid()}_{name}"
            mode = "rxonly" if role == "server" else "txonly"
            command = ["dpdk-testpmd", f"--lcores=0@{cpu},1@{cpu}", "--no-huge", "-m", "512", "--no-pci",
                       f"--file-prefix={self.prefix}",
                       f"--vdev=net_memif0,role={role},socket={socket},socket-abstract=no", "--",
                       f"--forward-mode={mode}", "--stats-period=1", "--total-num-mbufs=16384", "--burst=32",
                       "--no-flush-rx"]
            if mode == "txonly":
                command.append(f"--txpkts={size}")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)

    def alive(self):
        return self.process.poll() is None

    def log_size(self):
        self.log.flush()
        return os.path.getsize(self.log_path)

    def samples(self, start, end):
        """Receive-rate samples (packets/s) the receiver printed between two log offsets."""
        with open(self.log_path, errors="replace") as log:
            log.seek(start)
            text = log.read(end - start)
        pattern = r"rx_pps=([0-9.]+)" if self.kind in SOFTDPU_KINDS else r"Rx-pps:\s+([0-9]+)"
        return [float(v) for v in re.findall(pattern, text)]

    def stop(self):
        if self.alive():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        if self.prefix:
            for base in ("/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
                shutil.rmtree(os.path.join(base, self.prefix), ignore_errors=True)


def run_pair(sender_kind, receiver_kind, size, args, workdir, tag):
    socket = os.path.join(workdir, f"{tag}.sock")
    receiver = sender = None
    try:
        receiver = Side(receiver_kind, "server", 0, size, socket, args.softdpu, workdir, f"{tag}-rx")
        deadline = time.monotonic() + 30
        while not os.path.exists(socket):
            if time.monotonic() > deadline or not receiver.alive():
                raise RuntimeError(f"{tag}: receiver never listened; see {receiver.log_path}")
            time.sleep(0.05)
        # testpmd's socket appears at probe; its port (the listener's handler) starts later.
        while receiver_kind == "testpmd" and "packet forwarding - ports=" not in open(receiver.log_path).read():
            if time.monotonic() > deadline or not receiver.alive():
                raise RuntimeError(f"{tag}: testpmd never started forwarding; see {receiver.log_path}")
            time.sleep(0.05)
        sender = Side(sender_kind, "client", 1, size, socket, args.softdpu, workdir, f"{tag}-tx")
        time.sleep(args.warmup)
        if not (receiver.alive() and sender.alive()):
            raise RuntimeError(f"{tag}: a side exited early; see {workdir}")
        offset0, wall0 = receiver.log_size(), time.monotonic()
        cpu0 = (cpu_seconds(sender.process.pid), cpu_seconds(receiver.process.pid))
        time.sleep(args.window)
        offset1, wall1 = receiver.log_size(), time.monotonic()
        cpu1 = (cpu_seconds(sender.process.pid), cpu_seconds(receiver.process.pid))
        samples = receiver.samples(offset0, offset1)
        if not samples:
            raise RuntimeError(f"{tag}: no rate samples; see {receiver.log_path}")
        wall = wall1 - wall0
        return {"pps": statistics.median(samples), "samples": samples, "tx_cpu": (cpu1[0] - cpu0[0]) / wall,
                "rx_cpu": (cpu1[1] - cpu0[1]) / wall}
    finally:
        for side in (sender, receiver):  # the sender first: testpmd dislikes losing its server mid-burst
            if side is not None:
                side.stop()
        if os.path.exists(socket):
            os.unlink(socket)


PAIRS = [("ours", "ours"), ("ours", "testpmd"), ("testpmd", "ours"), ("testpmd", "testpmd")]
SOFTDPU_KINDS = ("ours", "base")  # our generator/sink: this build, and an optional baseline build


def core_round_trip(probe):
    """The two vCPUs' cache-line round trip in ns (bench_core_pingpong), or None without --probe."""
    if not probe:
        return None
    return int(subprocess.check_output([probe, "0.2"], text=True).strip())


def load_average():
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--softdpu", required=True, help="the softdpu CLI built with libmemif")
    parser.add_argument("--sizes", default="64,1500", help="frame sizes in bytes (default 64,1500)")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each pairing and size (default 5)")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before measuring (default 2)")
    parser.add_argument("--window", type=float, default=4.0, help="seconds measured (default 4)")
    parser.add_argument("--baseline", help="another softdpu build: adds the pairing base -> base")
    parser.add_argument("--probe", help="bench_core_pingpong: print the core-to-core round trip before and after each run")
    args = parser.parse_args()
    pairs = PAIRS + ([("base", "base")] if args.baseline else [])
    args.softdpu = {"ours": args.softdpu, "base": args.baseline}
    if shutil.which("dpdk-testpmd") is None:
        print("SKIP: dpdk-testpmd not found (install dpdk-dev)")
        return 77
    if os.cpu_count() < 2:
        print("need at least 2 CPUs (one per side)")
        return 1
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    print(f"load average before: {load_average()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="softdpu-memif-bench.") as workdir:
        for repeat in range(args.repeats):
            for size in sizes:
                for sender, receiver in pairs:
                    tag = f"{sender}-{receiver}-{size}-{repeat}"
                    before = core_round_trip(args.probe)
                    result = run_pair(sender, receiver, size, args, workdir, tag)
                    after = core_round_trip(args.probe)
                    results.setdefault((sender, receiver, size), []).append(result)
                    probe = f"  core round trip {before}/{after} ns" if args.probe else ""
                    print(f"run {repeat + 1}/{args.repeats} {sender:>7} -> {receiver:<7} {size:>5} B: "
                          f"{result['pps'] / 1e6:6.2f} Mpps  cpu tx {result['tx_cpu']:4.0%} rx {result['rx_cpu']:4.0%}"
                          f"{probe}", flush=True)
    print(f"load average after: {load_average()}")
    print()
    print(f"medians of {args.repeats} runs; sender on CPU 1 (client), receiver on CPU 0 (server), copy mode")
    print("| sender -> receiver | size | Mpps (median) | runs min-max | ÷ testpmd->testpmd | pooled: Mpps | ÷ testpmd->testpmd | CPU share tx / rx |")
    print("|---|---|---|---|---|---|---|---|")

    def pooled(runs):
        return statistics.median(v for r in runs for v in r["samples"])

    for size in sizes:
        baseline = statistics.median(r["pps"] for r in results[("testpmd", "testpmd", size)])
        pooled_baseline = pooled(results[("testpmd", "testpmd", size)])
        for sender, receiver in pairs:
            runs = results[(sender, receiver, size)]
            pps = [r["pps"] for r in runs]
            median = statistics.median(pps)
            ratio = f"{median / baseline:.2f}" if baseline > 0 else "n/a"
            all_samples = pooled(runs)
            pooled_ratio = f"{all_samples / pooled_baseline:.2f}" if pooled_baseline > 0 else "n/a"
            print(f"| {sender} -> {receiver} | {size} B | {median / 1e6:.2f} | {min(pps) / 1e6:.2f}-{max(pps) / 1e6:.2f} "
                  f"| {ratio} | {all_samples / 1e6:.2f} | {pooled_ratio} | {statistics.median(r['tx_cpu'] for r in runs):.0%} / "
                  f"{statistics.median(r['rx_cpu'] for r in runs):.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
