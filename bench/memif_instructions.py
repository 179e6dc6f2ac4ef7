#!/usr/bin/env python3
"""Instructions per packet of one memif side, our generator/sink or DPDK testpmd (callgrind).

Supporting evidence for bench/memif_bench.py when the machine is too busy for packet rates to
mean much: an instruction count does not depend on how much CPU the scheduler hands out.

The measured side runs under valgrind (callgrind), about 50 times slower than native; its peer
runs natively on the other CPU and is therefore always ahead, so the measured side never waits:
a measured receiver always finds a full burst, a measured sender always finds free slots. Spin
loops on an empty or full ring thus stay out of the count, which is what makes the figure a
per-packet cost. The rings have 16,384 slots (--ring-log2 14, on both kinds alike): at the
measured side's slow pace that is enough buffer to ride out the native peer being descheduled
for a while on a busy machine. After a warm-up the counters are zeroed (callgrind_control -z); after the
window they are dumped (-d). The packets in the window are the sum of the measured side's
per-second rate reports between those two moments (its own log), so the division is exact to
about one report period at either end (a few per cent with the default 20 s window).

    bench/memif_instructions.py --softdpu build/tools/softdpu [--sizes 64,1500] [--window 20]

Prints instructions per packet (Ir) for: our sink (receiver), testpmd rxonly (receiver), our
generator (sender), testpmd txonly (sender); copy mode, bursts of 32, server = receiver on CPU 0.
Spinning is not wholly excluded: when the native peer is off the CPU longer than the ring lasts,
the measured side polls; callgrind --keep dumps show how many empty polls there were.
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def command_for(kind, role, cpu, size, socket, softdpu, prefix, ring_log2):
    if kind == "ours":
        application = "sink" if role == "server" else "gen"
        command = [softdpu, "memif", application, "--role", role, "--socket", socket, "--quiet",
                   "--connect-timeout", "60", "--interval", "1", "--ring-log2", str(ring_log2)]
        if application == "sink":
            command += ["--verify", "header", "--burst", "32"]
        else:
            command += ["--size", str(size), "--burst", "32"]
        return ["taskset", "-c", str(cpu)] + command
    mode = "rxonly" if role == "server" else "txonly"
    command = ["dpdk-testpmd", f"--lcores=0@{cpu},1@{cpu}", "--no-huge", "-m", "512", "--no-pci",
               f"--file-prefix={prefix}",
               f"--vdev=net_memif0,role={role},socket={socket},socket-abstract=no,rsize={ring_log2}", "--",
               f"--forward-mode={mode}", "--stats-period=1", "--total-num-mbufs=16384", "--burst=32", "--no-flush-rx"]
    if mode == "txonly":
        command.append(f"--txpkts={size}")
    return command


def rates(log_text, kind, receiving):
    if kind == "ours":
        pattern = r"rx_pps=([0-9.]+)" if receiving else r"tx_pps=([0-9.]+)"
    else:
        pattern = r"Rx-pps:\s+([0-9]+)" if receiving else r"Tx-pps:\s+([0-9]+)"
    return [float(v) for v in re.findall(pattern, log_text)]


def read_from(path, offset):
    with open(path, errors="replace") as log:
        log.seek(offset)
        return log.read()


def measure(kind, measured_role, size, args, workdir, tag):
    """Instructions per packet of `kind` in `measured_role` (server = receiver, client = sender)."""
    socket = os.path.join(workdir, f"{tag}.sock")
    peer_kind = "ours"  # the native peer: our generator/sink (fast, never the bottleneck)
    procs, logs, prefixes = {}, {}, []
    out_file = os.path.join(workdir, f"{tag}.callgrind")
    try:
        for role in ("server", "client"):
            measured = role == measured_role
            side_kind = kind if measured else peer_kind
            prefix = f"softdpu_instr_{os.getpid()}_{tag}_{role}"
            prefixes.append(prefix)
            command = command_for(side_kind, role, 0 if role == "server" else 1, size, socket, args.softdpu, prefix,
                                  args.ring_log2)
            if measured:
                cpu = command[:3] if command[0] == "taskset" else ["taskset", "-c", "0" if role == "server" else "1"]
                rest = command[3:] if command[0] == "taskset" else command
                command = cpu + ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                                 "--dump-instr=no", "--trace-children=no"] + rest
            logs[role] = os.path.join(workdir, f"{tag}-{role}.log")
            procs[role] = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=open(logs[role], "w"),
                                           stderr=subprocess.STDOUT)
            if role == "server":
                deadline = time.monotonic() + 120
                ready = "packet forwarding - ports=" if side_kind == "testpmd" else None
                while not os.path.exists(socket) or (ready and ready not in open(logs[role]).read()):
                    if time.monotonic() > deadline or procs[role].poll() is not None:
                        raise RuntimeError(f"{tag}: server did not start; see {logs[role]}")
                    time.sleep(0.2)
        pid = procs[measured_role].pid
        time.sleep(args.warmup)
        for role, proc in procs.items():
            if proc.poll() is not None:
                tails = {r: "".join(open(path, errors="replace").readlines()[-30:]) for r, path in logs.items()}
                raise RuntimeError(f"{tag}: {role} exited early; logs end with {tails}")
        subprocess.run(["callgrind_control", "-z", str(pid)], check=True, capture_output=True)
        offset = os.path.getsize(logs[measured_role])
        time.sleep(args.window)
        subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
        text = read_from(logs[measured_role], offset)
        samples = rates(text, kind, measured_role == "server")
        if not samples:
            raise RuntimeError(f"{tag}: no rate reports; see {logs[measured_role]}")
        # Each report covers about one second; the window holds about `window` of them.
        packets = sum(samples[: max(1, round(args.window))])
        dumps = sorted(glob.glob(out_file + "*"), key=os.path.getmtime)
        if args.keep:
            os.makedirs(args.keep, exist_ok=True)
            shutil.copy(dumps[-1], os.path.join(args.keep, f"{tag}.callgrind"))
        instructions = 0
        with open(dumps[-1]) as dump:
            for line in dump:
                if line.startswith("summary:") or line.startswith("totals:"):
                    instructions = int(line.split()[1])
        return instructions, packets
    finally:
        for role in ("client", "server"):
            proc = procs.get(role)
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGINT)
                try:
                    proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for prefix in prefixes:
            for base in ("/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
                shutil.rmtree(os.path.join(base, prefix), ignore_errors=True)
        if os.path.exists(socket):
            os.unlink(socket)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--softdpu", required=True, help="the softdpu CLI built with libmemif")
    parser.add_argument("--sizes", default="64,1500")
    parser.add_argument("--warmup", type=float, default=8.0, help="seconds before counting (default 8)")
    parser.add_argument("--window", type=float, default=20.0, help="seconds counted (default 20)")
    parser.add_argument("--only", help="comma list of ours-rx, testpmd-rx, ours-tx, testpmd-tx")
    parser.add_argument("--ring-log2", type=int, default=14,
                        help="ring size (default 14: 16384 slots, so a briefly descheduled native peer "
                        "does not leave the measured side spinning on an empty or full ring)")
    parser.add_argument("--keep", help="copy the callgrind dumps into this directory (callgrind_annotate)")
    args = parser.parse_args()
    for tool in ("valgrind", "callgrind_control", "dpdk-testpmd"):
        if shutil.which(tool) is None:
            print(f"SKIP: {tool} not found")
            return 77
    cases = [("ours", "server"), ("testpmd", "server"), ("ours", "client"), ("testpmd", "client")]
    names = {"server": "rx", "client": "tx"}
    if args.only:
        wanted = set(args.only.split(","))
        cases = [c for c in cases if f"{c[0]}-{names[c[1]]}" in wanted]
    print("| side | size | instructions per packet | packets counted |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="softdpu-memif-instr.") as workdir:
        for size in [int(s) for s in args.sizes.split(",")]:
            for kind, role in cases:
                tag = f"{kind}-{names[role]}-{size}"
                instructions, packets = measure(kind, role, size, args, workdir, tag)
                per_packet = instructions / packets if packets else float("nan")
                print(f"| {kind} {names[role]} | {size} B | {per_packet:.0f} | {packets:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
