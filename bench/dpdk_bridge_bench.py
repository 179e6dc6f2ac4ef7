#!/usr/bin/env python3
"""The DOCA DPDK bridge's packet rate: a DPU program receiving through the bridge, and a forwarder,
each against testpmd -> testpmd over a plain memif link in the same run (docs/performance.md,
"DOCA DPDK bridge").

Pairings, all with one CPU per process (taskset; by default the sender on CPU 1, the receiver on
CPU 0, --cpus changes that):
  testpmd -> testpmd   baseline: dpdk-testpmd --forward-mode=txonly, a memif client, -> testpmd
                       --forward-mode=rxonly, the memif server, on a plain socket;
  testpmd -> bridge    testpmd txonly on the host end of the link (--link: hpf0, the host PF, whose
                       DPU end is the representor pf0hpf; or p0, the uplink) -> bench_dpdk_bridge_rx,
                       a DPU program (SOFTDPU_SIDE=dpu) that opened p0, probed it through
                       doca_dpdk_port_probe (with --devargs, e.g. representor=...) and receives in
                       bursts of 32 on the link's port, counting frames and bytes;
  testpmd -> bridge+m2b  the same with doca_dpdk_mempool_mbuf_to_buf + doca_buf_dec_refcount per frame;
  testpmd -> fwd -> testpmd  (with --forwarder) testpmd txonly on hpf0 -> a forwarder on the DPU
                       (representor -> uplink p0) -> testpmd rxonly on the far end of p0. Three
                       processes: on two CPUs the forwarder on CPU 0, both testpmds on CPU 1
                       (--cpus 0,1,1, the default; with more CPUs give the far one its own);
  testpmd -> testpmd io -> testpmd  (with --forwarder) the same three processes on the same CPUs
                       with testpmd --forward-mode=io between two plain memif servers as the
                       forwarder: what that layout allows any forwarder (the forwarder is also
                       given as a ratio to it).
Every link has the softdpu link parameters (docs/links.md): 1024 slots, 16 KiB buffers, so the
baseline's plain link has them too; testpmd and the bridge program use 2176-byte mbufs (testpmd's
default), 16384 of them, bursts of 32.

How it measures, as bench/memif_bench.py does (see there): all pairings of a size start at once, then
take turns, SIGSTOP/SIGCONT, one slot each per round in a rotating order, so each is compared with
the baseline of the same round. Packets are counted the same way for every pairing by
bench/memif_ring_counter on the sender's ring (what the receiver took), and for the forwarder on the
far testpmd's receive ring (what the forwarder delivered). /proc/<pid>/stat gives each process's CPU
share over the slot.

After the rounds (--timing-seconds > 0), per size: testpmd -> bench_dpdk_bridge_rx --time, then
--time --convert, each alone and uninterrupted: the program's rte_eth_rx_burst cost per frame, and
mbuf_to_buf + release per frame, with a tight loop converting the same 32 mbufs for comparison.

    sudo bench/dpdk_bridge_bench.py --build build/default [--link hpf0|p0] [--devargs ...] [--rx-port NAME]
                                    [--sizes 64,1500] [--rounds 20] [--timing-seconds 5]
                                    [--forwarder none|builtin|CMD] [--cpus 0,1,1] [--eal OPTIONS]
                                    [--json FILE]
"""
import argparse
import datetime
import json
import mmap
import os
import shlex
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
from memif_bench import (RING_TAIL_OFFSET, WRAP_RISK_STEP, cpu_model, cpu_seconds,  # noqa: E402
                         load_average, percentile, shared_ring_header)

LOG2_RING = 10
BUFFER_SIZE = 16384
# A ring (DPDK's memif_ring_t: two cache lines of indexes) and its descriptors: a client's receive
# ring follows its transmit ring in region 0.
RING_BYTES = 128 + 16 * (1 << LOG2_RING)
MEMIF_COOKIE = 0x3E31F20
BASELINE = "testpmd -> testpmd"
FORWARDER = "testpmd -> fwd -> testpmd"
IO_FORWARDER = "testpmd -> testpmd io -> testpmd"


class Process(LoggedProcess):
    """One process of a pairing, its output in a log file."""

    def __init__(self, name, role, command, workdir, env=None, prefix=None):
        super().__init__(name, command, workdir, env=env, prefix=prefix)
        self.role = role


# CPUs: the receiver (or forwarder), the sender, the forwarder's far receiver (--cpus); EAL options
# added to every DPDK process (--eal).
CPUS = {"rx": 0, "tx": 1, "far": 1}
EAL_EXTRA = []


def eal(cpu, prefix):
    return ["--lcores=0@{0},1@{0}".format(cpu), "--no-huge", "-m", "256", "--no-pci",
            f"--file-prefix={prefix}"] + EAL_EXTRA


def memif_vdev(role, socket):
    return (f"net_memif0,role={role},socket={socket},socket-abstract=no,id=0,bsize={BUFFER_SIZE},"
            f"rsize={LOG2_RING}")


def testpmd(name, label, cpu, role, socket, mode, size, workdir):
    prefix = f"softdpu_dbb_{os.getpid()}_{name}"
    command = ["taskset", "-c", str(cpu), "dpdk-testpmd"] + eal(cpu, prefix) + [
        f"--vdev={memif_vdev(role, socket)}", "--", f"--forward-mode={mode}", "--stats-period=1",
        "--total-num-mbufs=16384", "--burst=32", "--no-flush-rx"]
    if mode == "txonly":
        command.append(f"--txpkts={size}")
    return Process(name, label, command, workdir, prefix=prefix)


def dpu_env(run_dir):
    env = dict(os.environ)
    env["SOFTDPU_SIDE"] = "dpu"
    env["SOFTDPU_RUN_DIR"] = run_dir
    return env


class Pairing:
    """The processes of one pairing, started in order (servers first), then paused; `count` names
    the process whose region holds the counted ring and the ring's offset."""

    def __init__(self, name, workdir):
        self.name, self.workdir = name, workdir
        self.processes = []
        self.ring = self.ring_path = None
        self.ring_offset = 0

    def add(self, process):
        self.processes.append(process)
        return process

    def check(self, deadline, what):
        if time.monotonic() > deadline or not all(p.alive() for p in self.processes):
            # The logs go with the temporary directory: their ends are given here.
            ends = "".join(f"\n--- {p.name} ({'running' if p.alive() else f'exited {p.process.returncode}'}):\n" +
                           "\n".join(p.log_text().splitlines()[-8:]) for p in self.processes)
            raise RuntimeError(f"{self.name}: {what}{ends}")

    def wait_for(self, condition, what, seconds=30):
        deadline = time.monotonic() + seconds
        while not condition():
            self.check(deadline, what)
            time.sleep(0.05)

    def count_on(self, process, ring_offset, pause=True):
        """Counts the ring at ring_offset in process's region 0 (a memif client's), once packets pass
        it; then pauses the pairing, unless told not to."""
        def found():
            self.ring, self.ring_path = shared_ring_header(process.pid)
            return self.ring is not None
        self.wait_for(found, f"{process.name} never created its region")
        self.ring_offset = ring_offset
        if ring_offset:
            self.ring.close()
            with open(self.ring_path, "rb") as region:
                page = ring_offset - ring_offset % mmap.PAGESIZE
                self.ring = mmap.mmap(region.fileno(), 2 * mmap.PAGESIZE, prot=mmap.PROT_READ, offset=page)
            self.ring_in_map = ring_offset - page
            self.wait_for(lambda: struct.unpack_from("<I", self.ring, self.ring_in_map)[0] == MEMIF_COOKIE,
                          f"no ring at offset {ring_offset} of {process.name}'s region")
        else:
            self.ring_in_map = 0
        first = self.tail()
        self.wait_for(lambda: self.tail() != first, "no packet arrived")
        if pause:
            self.pause()

    def tail(self):
        return struct.unpack_from("<H", self.ring, self.ring_in_map + RING_TAIL_OFFSET)[0]

    def pause(self):
        for process in self.processes:
            process.signal(signal.SIGSTOP)

    def resume(self):
        for process in self.processes:
            process.signal(signal.SIGCONT)

    def measure(self, counter, seconds, settle):
        self.resume()
        try:
            time.sleep(settle)
            cpu0 = [cpu_seconds(p.pid) for p in self.processes]
            output = subprocess.check_output([counter, self.ring_path, str(seconds), str(self.ring_offset)],
                                             text=True, timeout=seconds + 30)
            cpu1 = [cpu_seconds(p.pid) for p in self.processes]
        finally:
            self.pause()
        self.check(float("inf"), "a process exited")
        counted = {key: float(value) for key, value in (field.split("=") for field in output.split())}
        if counted["max_step"] >= WRAP_RISK_STEP:
            return None
        wall = counted["seconds"]
        return {"pps": counted["packets"] / wall, "fill": counted["fill_median"],
                "cpu": {p.role: (after - before) / wall for p, before, after in zip(self.processes, cpu0, cpu1)}}

    def stop(self):
        for process in self.processes:
            process.signal(signal.SIGCONT)
        # Senders first (they were added last): testpmd dislikes losing its server mid-burst.
        for process in reversed(self.processes):
            process.stop()
        if self.ring is not None:
            self.ring.close()


def ready_line(process, line):
    return lambda: line in process.log_text()


def bridge_receiver(name, label, args, run_dir, workdir, extra):
    """bench_dpdk_bridge_rx on the receiver's CPU (one lcore), on the DPU side of its own run directory."""
    prefix = f"softdpu_dbb_{os.getpid()}_{name}"
    cpu = CPUS["rx"]
    command = ["taskset", "-c", str(cpu), args.rx_program, f"--lcores=0@{cpu}", "--no-huge", "-m", "256", "--no-pci",
               f"--file-prefix={prefix}"] + EAL_EXTRA + ["--", "--iface", "p0", "--devargs", args.devargs, "--burst", "32"] + extra
    return Process(name, label, command, workdir, env=dpu_env(run_dir), prefix=prefix)


def make_pairings(size, args, workdir, pairings):
    """Starts every pairing of a size into `pairings` (so that the caller stops what was started
    when one fails)."""
    # Baseline: plain memif link, testpmd rxonly serves, testpmd txonly connects.
    p = pairings[BASELINE] = Pairing(BASELINE, workdir)
    socket = os.path.join(workdir, f"plain-{size}.sock")
    rx = p.add(testpmd(f"plain-{size}-rx", "rx", CPUS["rx"], "server", socket, "rxonly", size, workdir))
    p.wait_for(lambda: os.path.exists(socket) and "packet forwarding - ports=" in rx.log_text(), "rxonly never listened")
    tx = p.add(testpmd(f"plain-{size}-tx", "tx", CPUS["tx"], "client", socket, "txonly", size, workdir))
    p.count_on(tx, 0)

    rx_port = ["--rx-port", args.rx_port] if args.rx_port else []
    for name, extra in (("testpmd -> bridge", []), ("testpmd -> bridge+m2b", ["--convert"])):
        if name.endswith("m2b") and not args.convert_pairing:
            continue
        tag = "bridge-m2b" if extra else "bridge"
        run_dir = os.path.join(workdir, f"{tag}-{size}")
        os.makedirs(run_dir)
        p = pairings[name] = Pairing(name, workdir)
        rx = p.add(bridge_receiver(f"{tag}-{size}-rx", "rx", args, run_dir, workdir, rx_port + extra))
        p.wait_for(ready_line(rx, "receiving on port"), "the bridge receiver never started")
        tx = p.add(testpmd(f"{tag}-{size}-tx", "tx", CPUS["tx"], "client", os.path.join(run_dir, "links", f"{args.link}.sock"),
                           "txonly", size, workdir))
        p.count_on(tx, 0)

    if args.forwarder != "none":
        name = FORWARDER
        run_dir = os.path.join(workdir, f"fwd-{size}")
        os.makedirs(run_dir)
        p = pairings[name] = Pairing(name, workdir)
        if args.forwarder == "builtin":
            fwd = p.add(bridge_receiver(f"fwd-{size}", "fwd", args, run_dir, workdir,
                                        ["--rx-port", args.rx_port or args.link, "--tx-port", args.uplink_port]))
            p.wait_for(ready_line(fwd, "forwarding to port"), "the forwarder never started")
        else:
            prefix = f"softdpu_dbb_{os.getpid()}_fwd{size}"
            command = ["taskset", "-c", str(CPUS["rx"])] + [part.format(prefix=prefix, cpu=CPUS["rx"])
                                                             for part in shlex.split(args.forwarder)]
            fwd = p.add(Process(f"fwd-{size}", "fwd", command, workdir, env=dpu_env(run_dir), prefix=prefix))
            # Its ports started (the sockets appear at probe, before a client can connect).
            p.wait_for(ready_line(fwd, args.forwarder_ready), "the forwarder never said it was forwarding")
        links = os.path.join(run_dir, "links")
        p.wait_for(lambda: os.path.exists(os.path.join(links, "p0.sock")) and
                   os.path.exists(os.path.join(links, f"{args.link}.sock")), "the forwarder never served its links")
        far = p.add(testpmd(f"fwd-{size}-far", "far", CPUS["far"], "client", os.path.join(links, "p0.sock"), "rxonly", size, workdir))
        p.wait_for(ready_line(far, "packet forwarding - ports="), "the far testpmd never started")
        p.add(testpmd(f"fwd-{size}-tx", "tx", CPUS["tx"], "client", os.path.join(links, f"{args.link}.sock"), "txonly", size,
                      workdir))
        # The far testpmd's receive ring (after its transmit ring): what the forwarder delivered.
        p.count_on(far, RING_BYTES)

        # The same three processes on the same CPUs with testpmd's io forwarding between two plain
        # memif servers as the forwarder: what the layout allows a forwarder.
        name = IO_FORWARDER
        p = pairings[name] = Pairing(name, workdir)
        near, far_socket = (os.path.join(workdir, f"io-{size}-{end}.sock") for end in ("near", "far"))
        prefix = f"softdpu_dbb_{os.getpid()}_io{size}"
        cpu = CPUS["rx"]
        command = ["taskset", "-c", str(cpu), "dpdk-testpmd"] + eal(cpu, prefix) + [
            f"--vdev={memif_vdev('server', near)}", f"--vdev={memif_vdev('server', far_socket).replace('net_memif0', 'net_memif1')}",
            "--", "--forward-mode=io", "--stats-period=1", "--total-num-mbufs=16384", "--burst=32", "--no-flush-rx"]
        fwd = p.add(Process(f"io-{size}", "fwd", command, workdir, prefix=prefix))
        p.wait_for(ready_line(fwd, "packet forwarding - ports="), "testpmd io never started")
        far = p.add(testpmd(f"io-{size}-far", "far", CPUS["far"], "client", far_socket, "rxonly", size, workdir))
        p.wait_for(ready_line(far, "packet forwarding - ports="), "the far testpmd never started")
        p.add(testpmd(f"io-{size}-tx", "tx", CPUS["tx"], "client", near, "txonly", size, workdir))
        p.count_on(far, RING_BYTES)


def run_size(size, args, workdir):
    pairings = {}
    try:
        make_pairings(size, args, workdir, pairings)
        names = list(pairings)
        slots = {name: [] for name in names}
        ratios = {name: [] for name in names + [FORWARDER + " / io"]}
        records = []
        for round_index in range(args.rounds):
            order = names[round_index % len(names):] + names[:round_index % len(names)]
            this_round = {}
            for name in order:
                result = pairings[name].measure(args.counter, args.slot, args.settle)
                if result is not None:
                    this_round[name] = result
                    slots[name].append(result)
            base = this_round.get(BASELINE, {}).get("pps", 0)
            if base > 0:
                for name, result in this_round.items():
                    ratios[name].append(result["pps"] / base)
            io = this_round.get(IO_FORWARDER, {}).get("pps", 0)
            if io > 0 and FORWARDER in this_round:
                ratios[FORWARDER + " / io"].append(this_round[FORWARDER]["pps"] / io)
            records.append({"size": size, "round": round_index + 1, "order": order,
                            "pairings": {n: dict(r, ratio=r["pps"] / base if base else None)
                                         for n, r in this_round.items()}})
            rates = "  ".join(f"{n}: {this_round[n]['pps'] / 1e6:.2f}" if n in this_round else f"{n}: ---"
                              for n in names)
            print(f"{size:>5} B round {round_index + 1:>2}/{args.rounds}: {rates} Mpps", flush=True)
        return slots, ratios, records
    finally:
        for pairing in pairings.values():
            pairing.stop()


def timing(size, args, workdir, extra):
    """testpmd -> bench_dpdk_bridge_rx alone for --timing-seconds: the program's own figures."""
    tag = f"timing-{size}-{'m2b' if '--convert' in extra else 'rx'}"
    run_dir = os.path.join(workdir, tag)
    os.makedirs(run_dir)
    pairing = Pairing(tag, workdir)
    rx_port = ["--rx-port", args.rx_port] if args.rx_port else []
    try:
        rx = pairing.add(bridge_receiver(f"{tag}-rx", "rx", args, run_dir, workdir, rx_port + extra))
        pairing.wait_for(ready_line(rx, "receiving on port"), "the bridge receiver never started")
        tx = pairing.add(testpmd(f"{tag}-tx", "tx", CPUS["tx"], "client", os.path.join(run_dir, "links", f"{args.link}.sock"),
                                 "txonly", size, workdir))
        pairing.count_on(tx, 0, pause=False)  # the receiver's window starts at its first frame
        time.sleep(args.timing_seconds)
        rx.signal(signal.SIGINT)
        rx.process.wait(timeout=20)
        lines = [line for line in rx.log_text().splitlines() if line.startswith("frames=")]
        if not lines:
            raise RuntimeError(f"{tag}: no figures; see {rx.log_path}")
        return {key: float(value) for key, value in (field.split("=") for field in lines[-1].split())}
    finally:
        pairing.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default="build/default", help="the build directory (bench/ programs)")
    parser.add_argument("--link", default="hpf0", help="the link testpmd sends on: hpf0 (host PF -> its "
                        "representor) or p0 (the uplink)")
    parser.add_argument("--devargs", default=None, help="doca_dpdk_port_probe's devargs (default: "
                        "dv_flow_en=2,representor=pf0vf65535 for hpf0, dv_flow_en=2 for p0)")
    parser.add_argument("--rx-port", default=None, help="the DPDK port to receive on, by part of its name "
                        "(default: the link's name for a representor, the device's first port for p0)")
    parser.add_argument("--uplink-port", default="_p0_", help="the builtin forwarder's transmit port, by part "
                        "of its name (default _p0_)")
    parser.add_argument("--forwarder", default="none", help="none; builtin (bench_dpdk_bridge_rx --tx-port); or "
                        "a command run with SOFTDPU_SIDE=dpu on the receiver's CPU ({prefix}: a DPDK file prefix, {cpu}: that CPU)")
    parser.add_argument("--forwarder-ready", default="Forwarding between", help="what a forwarder command prints "
                        "once its ports are started (default: samples/dpdk_forwarder's \"Forwarding between\")")
    parser.add_argument("--no-convert-pairing", dest="convert_pairing", action="store_false",
                        help="leave out testpmd -> bridge+m2b")
    parser.add_argument("--cpus", default="0,1,1", help="CPUs of the receiver (or forwarder), the sender and the "
                        "forwarder's far receiver (default 0,1,1)")
    parser.add_argument("--eal", default="", help="EAL options added for every DPDK process (e.g. -d PMD_DIR)")
    parser.add_argument("--sizes", default="64,1500")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--slot", type=float, default=1.0)
    parser.add_argument("--settle", type=float, default=0.2)
    parser.add_argument("--timing-seconds", type=float, default=5, help="per size and mode; 0: no timing runs")
    parser.add_argument("--json", metavar="FILE")
    args = parser.parse_args()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    CPUS.update(zip(("rx", "tx", "far"), (int(c) for c in args.cpus.split(","))))
    EAL_EXTRA.extend(shlex.split(args.eal))
    if args.devargs is None:
        args.devargs = "dv_flow_en=2" + (",representor=pf0vf65535" if args.link != "p0" else "")
    if args.rx_port is None and args.link != "p0":
        args.rx_port = f"_{args.link}_"
    args.rx_program = os.path.join(args.build, "bench", "bench_dpdk_bridge_rx")
    args.counter = os.path.join(args.build, "bench", "memif_ring_counter")
    for program in (args.rx_program, args.counter):
        if not os.access(program, os.X_OK):
            print(f"{program} not found: build bench_dpdk_bridge_rx and memif_ring_counter")
            return 1
    if shutil.which("dpdk-testpmd") is None:
        print("SKIP: dpdk-testpmd not found (Debian's dpdk)")
        return 77
    sizes = [int(s) for s in args.sizes.split(",")]
    started = datetime.datetime.now(datetime.timezone.utc)
    load_before = load_average()
    print(f"load average before: {load_before}", flush=True)
    results, timings = {}, {}
    with tempfile.TemporaryDirectory(prefix="sdpu-dbb.") as workdir:
        for size in sizes:
            if args.rounds > 0:
                results[size] = run_size(size, args, workdir)
        if args.timing_seconds > 0:
            for size in sizes:
                timings[size] = {"rx": timing(size, args, workdir, ["--time"]),
                                 "m2b": timing(size, args, workdir, ["--time", "--convert", "--loop-seconds", "1"])}
    load_after = load_average()
    print(f"load average after: {load_after}")
    print()
    print(f"{args.rounds} rounds of {args.slot:g} s slots; link {args.link}, devargs {args.devargs}; CPUs: "
          f"receiver (forwarder) {CPUS['rx']}, sender {CPUS['tx']}, far receiver {CPUS['far']}")
    print("| pairing | size | Mpps (median of slots) | p10-p90 | ÷ testpmd -> testpmd (median of rounds) | "
          "CPU share per process | ring fill |")
    print("|---|---|---|---|---|---|---|")
    for size in results:
        slots, ratios, _ = results[size]
        for name in slots:
            rates = [s["pps"] / 1e6 for s in slots[name]]
            if not rates:
                continue
            shares = " / ".join(f"{role} {statistics.median(s['cpu'][role] for s in slots[name]):.0%}"
                                for role in slots[name][0]["cpu"])
            ratio = f"{statistics.median(ratios[name]):.2f} ({len(ratios[name])})" if ratios[name] else "n/a"
            print(f"| {name} | {size} B | {statistics.median(rates):.2f} | {percentile(rates, 0.1):.2f}-"
                  f"{percentile(rates, 0.9):.2f} | {ratio} | {shares} | "
                  f"{statistics.median(s['fill'] for s in slots[name]):.0f} |")
    for size in results:
        forwarder = results[size][1].get(FORWARDER + " / io")
        if forwarder:
            print(f"{size} B: {FORWARDER} ÷ {IO_FORWARDER} (median of rounds): "
                  f"{statistics.median(forwarder):.2f} ({len(forwarder)})")
    if results:
        print("ring fill (of 1024, median): the sender's ring, slots posted and not yet taken (near 1024 the "
              "sender waits for the receiver); for the forwarders the far receiver's ring, buffers it posted "
              "and the forwarder has not filled (near 1024 the far receiver waits for the forwarder).")
    if timings:
        print()
        print("| size | rx only: Mpps | frames/burst | rx_burst ns/frame, mean / median | with mbuf_to_buf: Mpps | "
              "frames/burst | rx_burst ns/frame | mbuf_to_buf + release ns/frame, mean / median | same, tight loop "
              "(median) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for size in sizes:
            rx, m2b = timings[size]["rx"], timings[size]["m2b"]
            print(f"| {size} B | {rx['frames'] / rx['seconds'] / 1e6:.2f} | {rx['frames_per_burst']:.1f} | "
                  f"{rx['rx_ns_per_frame']:.1f} / {rx['rx_ns_per_frame_median']:.1f} | "
                  f"{m2b['frames'] / m2b['seconds'] / 1e6:.2f} | {m2b['frames_per_burst']:.1f} | "
                  f"{m2b['rx_ns_per_frame']:.1f} / {m2b['rx_ns_per_frame_median']:.1f} | "
                  f"{m2b['convert_ns_per_frame']:.1f} / {m2b['convert_ns_per_frame_median']:.1f} | "
                  f"{m2b['loop_convert_ns_per_frame']:.1f} |")
    failed = [f"{name} at {size} B" for size in results for name, slots in results[size][0].items() if not slots]
    failed += [f"timing at {size} B" for size in timings for t in timings[size].values() if t["frames"] == 0]
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"benchmark": "dpdk_bridge_bench", "started_utc": started.isoformat(timespec="seconds"),
                       "load_average_before": load_before, "load_average_after": load_after,
                       "cpu_model": cpu_model(), "online_cpus": os.cpu_count(), "link": args.link,
                       "devargs": args.devargs, "forwarder": args.forwarder, "rounds": args.rounds,
                       "slot_s": args.slot, "settle_s": args.settle, "sizes": sizes,
                       "records": [r for size in results for r in results[size][2]],
                       "timings": {str(size): t for size, t in timings.items()}}, out, indent=1)
            out.write("\n")
        print(f"wrote {args.json}")
    if failed:
        print(f"FAIL: nothing counted for {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
