#!/usr/bin/env python3
"""libmemif throughput: our generator/sink ("softdpu memif gen|sink") against DPDK testpmd.

Four pairings, sender -> receiver: ours -> ours, ours -> testpmd, testpmd -> ours and
testpmd -> testpmd. The receiver is the memif server on CPU 0, the sender the client on CPU 1
(copy mode on both sides, bursts of 32, 1024-slot rings, 2048-byte buffers).

How it measures. On a shared VM the cost of moving a cache line between the two vCPUs changes every
few seconds (the host moves them closer or apart; see bench_core_pingpong), and rates follow it, so
pairings measured one after the other in long runs do not see the same machine. Here all four
pairings of a size are started at once and then take turns: every pairing but one is stopped
(SIGSTOP), the running one is measured for one slot (default 1 s, after 0.1 s to settle), stopped,
and the next one resumed (SIGCONT). A round gives every pairing one slot, in a rotating order, so
each pairing is compared with testpmd -> testpmd of the same round, a few seconds apart.

Packets are counted the same way for every pairing: the receiver's index (`tail`) of ring 0, read
from the shared region every 0.1-0.4 ms by bench/memif_ring_counter (a C program: the 16-bit index
wraps every 0.6 ms at 100 Mpps; a slot in which two readings came near a wrap apart is not counted).
/proc/<pid>/stat (utime + stime) gives the CPU share each side got during its slots, and the ring's
fill (head - tail, sampled with the tail) which side waits for the other.

Reported per pairing: the median rate over all slots, the 10th-90th percentile range, and the
median over rounds of (this pairing's rate / testpmd -> testpmd's rate in the same round). With
--probe, the core round trip is measured before every slot and after the last one, and that median
is also given over the rounds the vCPUs spent close together throughout, and over those they spent
far apart throughout (a round in which the placement moved compares unlike machines).

    bench/memif_bench.py --softdpu build/tools/softdpu [--sizes 64,1500] [--rounds 30]
                         [--probe build/bench/bench_core_pingpong] [--counter build/bench/memif_ring_counter]
                         [--json FILE]

--json FILE also writes every round in machine-readable form (bench/plot.py draws it): per round and
size, each pairing's rate, CPU shares, ring fill and ratio to testpmd -> testpmd, the probes and the
placement (close / far / mixed), with the load average before and after the run.

With --baseline OTHER_SOFTDPU three more pairings, base -> base, base -> testpmd and testpmd -> base, run another
build of our generator/sink (e.g. the one before a change). The load average is printed before and after: the figures
mean little when the machine is busy with other work.
"""
import argparse
import datetime
import json
import mmap
import os
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_procs import LoggedProcess  # noqa: E402

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
MEMIF_COOKIE = 0x3E31F20
RING_TAIL_OFFSET = 64  # memif_ring_t: cookie, flags, head in cache line 0; tail in cache line 1
WRAP_RISK_STEP = 57344  # packets between two readings from which a missed wrap is possible (7/8 of one)


def cpu_seconds(pid):
    """utime + stime of a process (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


class Side(LoggedProcess):
    """One process of a pairing: ours (softdpu memif) or testpmd."""

    def __init__(self, kind, role, cpu, size, socket, softdpu, workdir, name):
        self.kind, self.role = kind, role
        self.prefix = None
        if kind in SOFTDPU_KINDS:
            application = "sink" if role == "server" else "gen"
            command = ["taskset", "-c", str(cpu), softdpu[kind], "memif", application, "--role", role, "--socket",
                       socket, "--quiet", "--connect-timeout", "20", "--burst", "32"]
            if application == "sink":
                command += ["--interval", "1", "--verify", "header"]
            else:
                command += ["--size", str(size)]
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
        super().__init__(name, command, workdir, prefix=self.prefix)


def shared_ring_header(pid):
    """The client's region 0 (a memfd, rings first), mapped read-only, and its /proc path: ring 0
    is the client's transmit ring. (None, None) until the client has created it."""
    for fd in os.listdir(f"/proc/{pid}/fd"):
        path = f"/proc/{pid}/fd/{fd}"
        try:
            if not os.readlink(path).startswith("/memfd:"):
                continue
            with open(path, "rb") as region:
                if os.fstat(region.fileno()).st_size < mmap.PAGESIZE:
                    continue
                header = mmap.mmap(region.fileno(), mmap.PAGESIZE, prot=mmap.PROT_READ)
        except OSError:  # closed meanwhile
            continue
        if struct.unpack_from("<I", header, 0)[0] == MEMIF_COOKIE:
            return header, path
        header.close()
    return None, None


class Pairing:
    """A sender (client, CPU 1) and a receiver (server, CPU 0), connected and then paused."""

    def __init__(self, sender_kind, receiver_kind, size, softdpu, counter, workdir):
        self.name = f"{sender_kind} -> {receiver_kind}"
        tag = f"{sender_kind}-{receiver_kind}-{size}"
        self.socket = os.path.join(workdir, f"{tag}.sock")
        self.receiver = Side(receiver_kind, "server", 0, size, self.socket, softdpu, workdir, f"{tag}-rx")
        self.sender = None
        self.ring = None
        self.counter = counter
        deadline = time.monotonic() + 30
        # testpmd's socket appears at probe; its port (the listener's handler) starts later.
        while not os.path.exists(self.socket) or (
                receiver_kind == "testpmd" and "packet forwarding - ports=" not in self.receiver.log_text()):
            self.check(deadline, "the receiver never listened")
            time.sleep(0.05)
        self.sender = Side(sender_kind, "client", 1, size, self.socket, softdpu, workdir, f"{tag}-tx")
        while self.ring is None:
            self.check(deadline, "the sender never created its region")
            self.ring, self.ring_path = shared_ring_header(self.sender.process.pid)
            time.sleep(0.05)
        first = self.tail()
        while self.tail() == first:
            self.check(deadline, "no packet arrived")
            time.sleep(0.05)
        self.pause()

    def check(self, deadline, what):
        sides = [s for s in (self.receiver, self.sender) if s is not None]
        if time.monotonic() > deadline or not all(s.alive() for s in sides):
            raise RuntimeError(f"{self.name}: {what}; see {' and '.join(s.log_path for s in sides)}")

    def tail(self):
        return struct.unpack_from("<H", self.ring, RING_TAIL_OFFSET)[0]

    def pause(self):
        self.sender.signal(signal.SIGSTOP)
        self.receiver.signal(signal.SIGSTOP)

    def resume(self):
        self.receiver.signal(signal.SIGCONT)
        self.sender.signal(signal.SIGCONT)

    def measure(self, seconds, settle):
        """Runs the pairing for settle + seconds; returns its rate, CPU shares and ring fill over the
        last `seconds`, or None if the packet count is unsure."""
        self.resume()
        try:
            time.sleep(settle)
            cpu0 = (cpu_seconds(self.sender.process.pid), cpu_seconds(self.receiver.process.pid))
            output = subprocess.check_output([self.counter, self.ring_path, str(seconds)],
                                             text=True)
            cpu1 = (cpu_seconds(self.sender.process.pid), cpu_seconds(self.receiver.process.pid))
        finally:
            self.pause()
        self.check(float("inf"), "a side exited")
        counted = {key: float(value) for key, value in (field.split("=") for field in output.split())}
        if counted["max_step"] >= WRAP_RISK_STEP:  # two readings may have been a wrap apart
            return None
        wall = counted["seconds"]
        return {"pps": counted["packets"] / wall, "tx_cpu": (cpu1[0] - cpu0[0]) / wall,
                "rx_cpu": (cpu1[1] - cpu0[1]) / wall, "fill": counted["fill_median"]}

    def stop(self):
        # Both resumed first (a stopped process ignores SIGINT); the sender stops first: testpmd
        # dislikes losing its server mid-burst.
        self.receiver.signal(signal.SIGCONT)
        for side in (self.sender, self.receiver):
            if side is not None:
                side.stop()
        if self.ring is not None:
            self.ring.close()
        if os.path.exists(self.socket):
            os.unlink(self.socket)


# Core round trips (bench_core_pingpong) on this VM: 60-180 ns with the vCPUs close, 400-700 ns far.
CLOSE_BELOW_NS = 200
FAR_FROM_NS = 300
# Far above the far placement's round trip: one of the probe's threads was not running (a busy
# machine), and the probe says nothing about the placement.
DESCHEDULED_FROM_NS = 1500

PAIRS = [("ours", "ours"), ("ours", "testpmd"), ("testpmd", "ours"), ("testpmd", "testpmd")]
SOFTDPU_KINDS = ("ours", "base")  # our generator/sink: this build, and an optional baseline build
BASELINE = ("testpmd", "testpmd")


def core_round_trip(probe):
    """The two vCPUs' cache-line round trip in ns (bench_core_pingpong), or None without --probe."""
    if not probe:
        return None
    return int(subprocess.check_output([probe, "0.1"], text=True).strip())


def round_placement(probes):
    """'close' or 'far' when every probe of a round (before each slot and after the last) saw the
    same vCPU placement, 'mixed' when it moved during the round, 'descheduled' when a probe's
    threads could not both run (the placement is then unknown), None without --probe."""
    if None in probes:
        return None
    if max(probes) >= DESCHEDULED_FROM_NS:
        return "descheduled"
    kinds = {"close" if ns < CLOSE_BELOW_NS else "far" if ns >= FAR_FROM_NS else "mixed" for ns in probes}
    return kinds.pop() if len(kinds) == 1 else "mixed"


def load_average():
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[round(fraction * (len(ordered) - 1))]


def pair_name(pair):
    return f"{pair[0]} -> {pair[1]}"


def run_size(size, pairs, args, workdir):
    """All pairings of one frame size, taking turns; returns {pair: [slot results]}, the
    per-round ratios to the baseline pairing and one record per round (for --json)."""
    pairings = {}
    try:
        for pair in pairs:
            pairings[pair] = Pairing(*pair, size, args.softdpu, args.counter, workdir)
        slots = {pair: [] for pair in pairs}
        ratios = {pair: [] for pair in pairs}
        skipped = 0
        records = []
        for round_index in range(args.rounds):
            order = pairs[round_index % len(pairs):] + pairs[:round_index % len(pairs)]
            this_round, probes = {}, []
            for pair in order:
                probes.append(core_round_trip(args.probe))
                result = pairings[pair].measure(args.slot, args.settle)
                if result is None:
                    skipped += 1
                    continue
                this_round[pair] = result
                slots[pair].append(result)
            probes.append(core_round_trip(args.probe))
            where = round_placement(probes)
            baseline_pps = this_round[BASELINE]["pps"] if BASELINE in this_round else 0
            if baseline_pps > 0:
                for pair, result in this_round.items():
                    ratios[pair].append((result["pps"] / baseline_pps, where))
            records.append({
                "size": size, "round": round_index + 1, "order": [pair_name(p) for p in order],
                "probes_ns": probes if args.probe else None, "placement": where,
                "pairings": {pair_name(pair): dict(result, ratio=result["pps"] / baseline_pps if baseline_pps else None)
                             for pair, result in this_round.items()}})
            rates = "  ".join(f"{s[0][0]}{s[1][0]} {this_round[s]['pps'] / 1e6:5.2f}/{this_round[s]['fill']:<4.0f}"
                              if s in this_round else f"{s[0][0]}{s[1][0]}   ---/-   " for s in pairs)
            probe_text = f"  core round trip {'/'.join(map(str, probes))} ns: {where}" if args.probe else ""
            print(f"{size:>5} B round {round_index + 1:>2}/{args.rounds}: {rates} Mpps/fill{probe_text}", flush=True)
        if skipped:
            print(f"{size} B: {skipped} slots not counted (a late reading of the ring could hide a wrap)")
        return slots, ratios, records
    finally:
        for pairing in pairings.values():
            pairing.stop()


def cpu_model():
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return None


def write_json(args, sizes, pairs, results, started, load_before, load_after):
    document = {
        "benchmark": "memif_bench",
        "started_utc": started.isoformat(timespec="seconds"),
        "load_average_before": load_before, "load_average_after": load_after,
        "cpu_model": cpu_model(), "online_cpus": os.cpu_count(),
        "rounds": args.rounds, "slot_s": args.slot, "settle_s": args.settle, "sizes": sizes,
        "pairings": [pair_name(p) for p in pairs], "baseline_pairing": pair_name(BASELINE),
        "placement_thresholds_ns": {"close_below": CLOSE_BELOW_NS, "far_from": FAR_FROM_NS,
                                    "descheduled_from": DESCHEDULED_FROM_NS},
        "units": {"pps": "packets/s", "tx_cpu": "CPU share of the sender", "rx_cpu": "CPU share of the receiver",
                  "fill": "ring slots (of 1024), median", "ratio": "pps / baseline pairing's pps, same round"},
        "records": [record for size in sizes for record in results[size][2]],
    }
    with open(args.json, "w") as out:
        json.dump(document, out, indent=1)
        out.write("\n")
    print(f"wrote {args.json}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--softdpu", required=True, help="the softdpu CLI built with libmemif")
    parser.add_argument("--sizes", default="64,1500", help="frame sizes in bytes (default 64,1500)")
    parser.add_argument("--rounds", type=int, default=30, help="slots per pairing and size (default 30)")
    parser.add_argument("--slot", type=float, default=1.0, help="seconds measured per slot (default 1)")
    parser.add_argument("--settle", type=float, default=0.1, help="seconds after resuming, not measured (default 0.1)")
    parser.add_argument("--baseline", help="another softdpu build: adds base -> base, base -> testpmd and testpmd -> base")
    parser.add_argument("--probe", help="bench_core_pingpong: the core-to-core round trip before each round")
    parser.add_argument("--json", metavar="FILE", help="also write every round, machine-readable (bench/plot.py)")
    parser.add_argument("--counter", help="memif_ring_counter (default: bench/memif_ring_counter in the build "
                        "that holds --softdpu)")
    args = parser.parse_args()
    # Killed or hung up: unwind (SystemExit) so that the stopped pairings are resumed and ended.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    pairs = PAIRS + ([("base", "base"), ("base", "testpmd"), ("testpmd", "base")] if args.baseline else [])
    if args.counter is None:
        args.counter = os.path.join(os.path.dirname(os.path.abspath(args.softdpu)), "..", "bench",
                                    "memif_ring_counter")
    if not os.access(args.counter, os.X_OK):
        print(f"memif_ring_counter not found at {args.counter} (build it, or give --counter)")
        return 1
    args.softdpu = {"ours": args.softdpu, "base": args.baseline}
    if shutil.which("dpdk-testpmd") is None:
        print("SKIP: dpdk-testpmd not found (install dpdk-dev)")
        return 77
    if os.cpu_count() < 2:
        print("need at least 2 CPUs (one per side)")
        return 1
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    load_before = load_average()
    started = datetime.datetime.now(datetime.timezone.utc)
    print(f"load average before: {load_before}", flush=True)
    with tempfile.TemporaryDirectory(prefix="softdpu-memif-bench.") as workdir:
        for size in sizes:
            results[size] = run_size(size, pairs, args, workdir)
    load_after = load_average()
    print(f"load average after: {load_after}")
    if args.json:
        write_json(args, sizes, pairs, results, started, load_before, load_after)
    print()
    print(f"{args.rounds} rounds of {args.slot:g} s slots; sender on CPU 1 (client), receiver on CPU 0 (server), "
          "copy mode")
    print("| sender -> receiver | size | Mpps (median of slots) | p10-p90 | ÷ testpmd -> testpmd (median of rounds): "
          "all | close | far | CPU share tx / rx | ring fill |")
    print("|---|---|---|---|---|---|---|---|---|")
    for size in sizes:
        slots, ratios, _ = results[size]
        for pair in pairs:
            rates = [s["pps"] / 1e6 for s in slots[pair]]
            if not rates:
                continue
            columns = []
            for where in (None, "close", "far"):
                chosen = [ratio for ratio, placement in ratios[pair] if where is None or placement == where]
                columns.append(f"{statistics.median(chosen):.2f} ({len(chosen)})" if chosen else "n/a")
            print(f"| {pair[0]} -> {pair[1]} | {size} B | {statistics.median(rates):.2f} | "
                  f"{percentile(rates, 0.1):.2f}-{percentile(rates, 0.9):.2f} | {' | '.join(columns)} | "
                  f"{statistics.median(s['tx_cpu'] for s in slots[pair]):.0%} / "
                  f"{statistics.median(s['rx_cpu'] for s in slots[pair]):.0%} | "
                  f"{statistics.median(s['fill'] for s in slots[pair]):.0f} |")
    if args.probe:
        print("(n): rounds counted. close / far: only rounds in which every probe (before each slot and after "
              f"the last) saw the vCPUs close / far apart; a probe of {DESCHEDULED_FROM_NS} ns or more (a busy "
              "machine) counts as neither.")
    print("ring fill: slots posted by the sender and not yet taken by the receiver (median over a slot's "
          "samples, then over slots; of 1024): near 0 the receiver waits for the sender, near 1024 the "
          "sender waits for the receiver.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
