#!/usr/bin/env python3
"""App Shield (`softdpu apsh ps` / `modules`) next to drgn on the same ELF core of a guest.

Runs each query several times in a fresh process, on both sides, and prints the median wall
time, the peak RSS (/usr/bin/time %M) and the difference between the answers (pid/comm set of
the processes, name set of the modules). Not a CI test: it needs Debian's python3-drgn and the
guest kernel's debug vmlinux (docs/performance.md, "App Shield next to drgn").

Usage:
  bench/apsh_drgn_compare.py --core build/guest-snapshots/TAG/memory.elf \\
      --vmlinux DIR/usr/lib/debug/boot/vmlinux-RELEASE [--softdpu build/default/tools/softdpu] \\
      [--runs 5] [--json OUT.json]

drgn (0.0.22, Debian 12) reads a kernel core only when it has a VMCOREINFO note, which QEMU's
dump-guest-memory writes only for a guest started with `-device vmcoreinfo` whose kernel has
loaded qemu_fw_cfg, and it needs virtual addresses for the kernel image, which a paging=false
dump does not have. For such a core (the test guest's), the script writes a copy, CORE.drgn (or
--drgn-core), with the kernel's own VMCOREINFO note (found in the guest's memory, byte for byte
what QEMU would have copied) and a PT_LOAD for the kernel image mapping over the same bytes
(prepare_drgn_core). A paging=true dump has virtual addresses and gets only the note. softdpu
reads the original core.

With a tests/guest ground-truth.txt next to the core (or --ground-truth), both answers are also
compared with the guest's own /proc. Exit status 1 when the two tools disagree.

Each drgn run is a fresh `python3` process (Debian's /usr/bin/python3, --drgn-python) that loads
the core and the vmlinux DWARF and walks the list once; it also reports how its time splits into
loading (core + debug info) and the walk itself. The same walk repeated in an already loaded drgn
is timed in one more drgn run per query, outside the timed ones.
"""

import argparse
import json
import mmap
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

PT_NOTE = 4
PN_XNUM = 0xFFFF
NOTE_NAME = b"VMCOREINFO\x00"


# ---- ELF core: what drgn needs in it --------------------------------------------------------


def _elf_phdrs(m):
    if m[:4] != b"\x7fELF" or m[4] != 2 or m[5] != 1:
        raise SystemExit("not a 64-bit little-endian ELF file")
    e_phoff, e_shoff = struct.unpack_from("<QQ", m, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", m, 0x36)
    if e_phnum == PN_XNUM:  # more than 65534 segments: the count is section header 0's sh_info
        e_phnum, = struct.unpack_from("<I", m, e_shoff + 44)
    for i in range(e_phnum):
        off = e_phoff + i * e_phentsize
        yield off, struct.unpack_from("<IIQQQQQQ", m, off)


def _notes(blob):
    pos = 0
    while pos + 12 <= len(blob):
        namesz, descsz, ntype = struct.unpack_from("<III", blob, pos)
        name = blob[pos + 12:pos + 12 + namesz]
        desc_off = pos + 12 + ((namesz + 3) & ~3)
        yield name, ntype, blob[desc_off:desc_off + descsz]
        pos = desc_off + ((descsz + 3) & ~3)


def drgn_ready(path):
    """Whether drgn can read the core as it is: a VMCOREINFO note and virtual addresses."""
    note = virtual = False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        for _, (p_type, _, p_offset, p_vaddr, _, p_filesz, _, _) in _elf_phdrs(m):
            if p_type == PT_NOTE and any(n == NOTE_NAME for n, _, _ in _notes(m[p_offset:p_offset + p_filesz])):
                note = True
            virtual |= p_type == 1 and p_vaddr >= 1 << 63
    return note and virtual


KERNEL_MAP = 0xFFFFFFFF80000000  # __START_KERNEL_map: the kernel image mapping (KERNEL_IMAGE_SIZE 1 GiB)


def prepare_drgn_core(core, out):
    """Copies core to out with what drgn 0.0.22 needs and QEMU wrote only on request.

    1. The kernel's VMCOREINFO note, found in the guest's memory (vmcoreinfo_note: namesz 11,
       descsz, type 0, "VMCOREINFO\\0" padded to 12, "OSRELEASE=..."), byte for byte what QEMU
       copies into the core with -device vmcoreinfo.
    2. A PT_LOAD with the virtual addresses of the kernel image mapping over the same file bytes
       as the physical one (what a kdump vmcore has): drgn reads swapper_pg_dir through a
       virtual address, and a paging=false dump has none (drgn then fails with "recursive
       address translation; page table may be missing from core dump").
    """
    with open(core, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        found = []
        pos = m.find(b"VMCOREINFO\x00\x00OSRELEASE=")
        while pos >= 12:
            namesz, descsz, ntype = struct.unpack_from("<III", m, pos - 12)
            if namesz == 11 and ntype == 0 and 0 < descsz <= 4096:
                found.append(bytes(m[pos - 12:pos + 12 + ((descsz + 3) & ~3)]))
            pos = m.find(b"VMCOREINFO\x00\x00OSRELEASE=", pos + 1)
        if not found:
            raise SystemExit(f"{core}: no VMCOREINFO note in the core nor in the guest's memory")
        if len(set(found)) > 1:
            print(f"note: {len(set(found))} different VMCOREINFO notes in memory; using the first", file=sys.stderr)
        note = found[0]
        info = dict(line.split("=", 1) for line in note[24:].rstrip(b"\0").decode().splitlines() if "=" in line)
        if "NUMBER(phys_base)" not in info:
            raise SystemExit(f"{core}: the VMCOREINFO note has no NUMBER(phys_base)")
        phys_base = int(info["NUMBER(phys_base)"]) % (1 << 64)
        e_shoff, = struct.unpack_from("<Q", m, 0x28)
        e_phentsize, e_phnum = struct.unpack_from("<HH", m, 0x36)
        phdrs = list(_elf_phdrs(m))
        notes_ph = [ph for _, ph in phdrs if ph[0] == PT_NOTE]
        if len(notes_ph) != 1:
            raise SystemExit(f"{core}: expected one PT_NOTE segment, found {len(notes_ph)}")
        old_notes = bytes(m[notes_ph[0][2]:notes_ph[0][2] + notes_ph[0][5]])
    # Physical p -> virtual p - phys_base + __START_KERNEL_map, within the 1 GiB image mapping.
    kernel_loads = []
    # A paging=true dump has kernel virtual addresses; a paging=false one has none (its firmware
    # segment at 0xfffc0000 has p_vaddr = p_paddr).
    has_virtual = any(ph[0] == 1 and ph[3] >= 1 << 63 for _, ph in phdrs)
    for _, (p_type, p_flags, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, p_align) in phdrs:
        if has_virtual or p_type != 1 or p_vaddr != 0:
            continue
        v0 = (p_paddr - phys_base + KERNEL_MAP) % (1 << 64)
        lo, hi = max(v0, KERNEL_MAP), min(v0 + p_filesz, KERNEL_MAP + (1 << 30))
        if lo < hi:
            kernel_loads.append((1, 7, p_offset + lo - v0, lo, p_paddr + lo - v0, hi - lo, hi - lo, 0))
    if not kernel_loads and not has_virtual:
        raise SystemExit(f"{core}: no physical segment holds the kernel image (phys_base {phys_base:#x})")

    tmp = out + ".tmp"
    shutil.copyfile(core, tmp)
    os.chmod(tmp, 0o644)
    with open(tmp, "r+b") as f:
        end = f.seek(0, os.SEEK_END)
        f.write(b"\x00" * ((-end) % 8))
        notes_off = f.tell()
        has_note = any(n == NOTE_NAME for n, _, _ in _notes(old_notes))
        blob = old_notes if has_note else old_notes + note
        f.write(blob)
        f.write(b"\x00" * ((-f.tell()) % 8))
        phoff = f.tell()
        new = []
        for _, ph in phdrs:
            if ph[0] == PT_NOTE:
                ph = (PT_NOTE, ph[1], notes_off, 0, 0, len(blob), len(blob), ph[7])
            new.append(ph)
        for ph in new + kernel_loads:
            f.write(struct.pack("<IIQQQQQQ", *ph).ljust(e_phentsize, b"\x00"))
        f.seek(0x20)
        f.write(struct.pack("<Q", phoff))
        count = len(new) + len(kernel_loads)
        if count >= PN_XNUM:
            if e_phnum != PN_XNUM:
                raise SystemExit(f"{core}: {count} segments and no section header 0 to hold the count")
            f.seek(e_shoff + 44)
            f.write(struct.pack("<I", count))
            count = PN_XNUM
        f.seek(0x38)
        f.write(struct.pack("<H", count))
    os.replace(tmp, out)
    return info.get("OSRELEASE", "?")


# ---- drgn worker (runs under Debian's python3 with python3-drgn) ---------------------------------


def drgn_worker(core, vmlinux, query, repeat):
    t0 = time.perf_counter()
    import drgn
    from drgn.helpers.linux.list import list_for_each_entry
    from drgn.helpers.linux.pid import for_each_task

    prog = drgn.Program()
    prog.set_core_dump(core)
    try:
        prog.load_debug_info([vmlinux])
    except drgn.MissingDebugInfoError as e:
        # The modules' own debug files are not given (the lists need only vmlinux's types).
        print(f"drgn: {e}", file=sys.stderr)
    t1 = time.perf_counter()

    def walk():
        if query == "ps":
            # for_each_task iterates every task (threads too); a process is a thread-group leader.
            return [{"pid": t.pid.value_(), "ppid": t.real_parent.tgid.value_(),
                     "comm": t.comm.string_().decode(errors="replace")}
                    for t in for_each_task(prog) if t.pid.value_() == t.tgid.value_()]
        return [{"name": mod.name.string_().decode(errors="replace")}
                for mod in list_for_each_entry("struct module", prog["modules"].address_of_(), "list")]

    rows = walk()
    t2 = time.perf_counter()
    again = []
    for _ in range(repeat):
        s = time.perf_counter()
        walk()
        again.append(time.perf_counter() - s)
    json.dump({"drgn": drgn.__version__, "load_s": t1 - t0, "first_walk_s": t2 - t1,
               "warm_walk_s": statistics.median(again) if again else None, "rows": rows}, sys.stdout)


# ---- driver ----------------------------------------------------------------------------------------


def timed(cmd):
    """Runs cmd under /usr/bin/time; returns (stdout, wall seconds, peak RSS KiB)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        start = time.perf_counter()
        p = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", tf.name] + cmd, capture_output=True, text=True)
        wall = time.perf_counter() - start
        if p.returncode != 0:
            raise SystemExit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
        rss = int(tf.read().strip().splitlines()[-1])
    return p.stdout, wall, rss


def seconds(s):
    """A duration for people: µs below 1 ms, ms below 1 s."""
    return f"{s * 1e6:.0f} µs" if s < 1e-3 else f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.2f} s"


def diff(label, ours, theirs, a="softdpu", b="drgn"):
    """Prints and returns what only one of two sets holds."""
    only_ours, only_theirs = sorted(ours - theirs), sorted(theirs - ours)
    print(f"{label}: {a} {len(ours)}, {b} {len(theirs)}, common {len(ours & theirs)}")
    for x in only_ours:
        print(f"  only {a}: {x}")
    for x in only_theirs:
        print(f"  only {b}: {x}")
    as_list = lambda xs: [list(x) if isinstance(x, tuple) else x for x in xs]
    return {a: len(ours), b: len(theirs), "only_" + a: as_list(only_ours), "only_" + b: as_list(only_theirs)}


def ground_truth(path):
    """(pid, comm) set and module name set from tests/guest's ground-truth.txt (the guest's /proc)."""
    procs, mods, section = set(), set(), None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("@@BEGIN "):
                section = line[8:]
            elif line.startswith("@@END"):
                section = None
            elif section == "processes":
                fields = line.split("\t")
                procs.add((int(fields[0]), fields[5]))
            elif section == "modules" and line:
                mods.add(line.split()[0])
    return procs, mods


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--core", help="ELF core (QEMU dump-guest-memory)")
    ap.add_argument("--vmlinux", help="the guest kernel's debug vmlinux (linux-image-RELEASE-dbg)")
    ap.add_argument("--softdpu", default="build/default/tools/softdpu")
    ap.add_argument("--drgn-python", default="/usr/bin/python3", help="a python with drgn (Debian's python3-drgn)")
    ap.add_argument("--drgn-core", help="where to write the core with the VMCOREINFO note (default CORE.drgn)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--ground-truth", help="tests/guest's ground-truth.txt (default: the one next to the core, if any)")
    ap.add_argument("--json", help="write the figures and the differences here")
    ap.add_argument("--drgn-worker", choices=["ps", "modules"], help=argparse.SUPPRESS)
    ap.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.drgn_worker:
        return drgn_worker(a.core, a.vmlinux, a.drgn_worker, a.repeat)
    if not a.core or not a.vmlinux:
        ap.error("--core and --vmlinux are needed")
    for p in (a.core, a.vmlinux, a.softdpu, a.drgn_python):
        if not os.path.exists(p):
            raise SystemExit(f"{p}: not found")

    drgn_core = a.core
    setup = {}
    if not drgn_ready(a.core):
        drgn_core = a.drgn_core or a.core + ".drgn"
    if drgn_core != a.core and os.path.exists(drgn_core) and \
            os.path.getmtime(drgn_core) >= os.path.getmtime(a.core) and drgn_ready(drgn_core):
        print(f"drgn core: {drgn_core} (prepared earlier)")
    elif drgn_core != a.core:
        start = time.perf_counter()
        release = prepare_drgn_core(a.core, drgn_core)
        setup["prepare_drgn_core_s"] = time.perf_counter() - start
        print(f"drgn core: {drgn_core} (VMCOREINFO note of {release} from guest memory, kernel image PT_LOAD, "
              f"{setup['prepare_drgn_core_s']:.2f} s)")

    me = os.path.abspath(__file__)
    results = {"core": a.core, "vmlinux": a.vmlinux, "runs": a.runs, "setup": setup, "queries": {},
               "load_average_before": os.getloadavg()}
    print("load average before: " + " ".join(f"{x:.2f}" for x in results["load_average_before"]))
    print(f"{'query':8} {'tool':8} {'wall median':>12} {'min':>8} {'max':>8} {'peak RSS':>10}  breakdown")
    answers = {}
    tools = ("softdpu", "drgn")
    drgn_cmd = lambda query, repeat: [a.drgn_python, me, "--drgn-worker", query, "--core", drgn_core,
                                      "--vmlinux", a.vmlinux, "--repeat", str(repeat)]
    for query in ("ps", "modules"):
        per = {}
        walls, rsss, extra = ({t: [] for t in tools} for _ in range(3))
        # The tools take turns, so that both see the same machine load.
        for i in range(a.runs):
            for tool in tools:
                if tool == "softdpu":
                    cmd = [a.softdpu, "apsh", query, "--memory", "elf:" + a.core, "--output", "json", "--no-progress"]
                else:
                    cmd = drgn_cmd(query, 0)
                out, wall, rss = timed(cmd)
                walls[tool].append(wall)
                rsss[tool].append(rss)
                data = json.loads(out)
                if tool == "drgn":
                    extra[tool].append(data)
                    data = data["rows"]
                if i == 0:
                    answers[(query, tool)] = data
        # The walk repeated in a loaded drgn, in a run of its own: repeats in the timed runs would
        # add to their wall time (5 x 150 ms with 1,000 processes).
        warm, _, _ = timed(drgn_cmd(query, 5))
        warm_walk_s = json.loads(warm)["warm_walk_s"]
        for tool in tools:
            w, r, e = walls[tool], rsss[tool], extra[tool]
            fig = {"wall_median_s": statistics.median(w), "wall_min_s": min(w), "wall_max_s": max(w),
                   "peak_rss_kib_max": max(r), "peak_rss_kib_median": statistics.median(r)}
            note = ""
            if e:
                fig["drgn_version"] = e[0]["drgn"]
                fig["load_median_s"] = statistics.median(x["load_s"] for x in e)
                fig["first_walk_median_s"] = statistics.median(x["first_walk_s"] for x in e)
                fig["warm_walk_median_s"] = warm_walk_s
                note = (f"load {fig['load_median_s']:.2f} s, walk {fig['first_walk_median_s'] * 1e3:.1f} ms "
                        f"(again in the same process {seconds(warm_walk_s)})")
            per[tool] = fig
            print(f"{query:8} {tool:8} {fig['wall_median_s']:>10.3f} s {fig['wall_min_s']:>6.3f} s "
                  f"{fig['wall_max_s']:>6.3f} s {fig['peak_rss_kib_max'] / 1024:>6.1f} MiB  {note}")
        results["queries"][query] = per

    print()
    ps_s = {(r["pid"], r["comm"]) for r in answers[("ps", "softdpu")]}
    ps_d = {(r["pid"], r["comm"]) for r in answers[("ps", "drgn")]}
    results["ps_diff"] = diff("processes (pid, comm)", ps_s, ps_d)
    ppid_s = {r["pid"]: r["ppid"] for r in answers[("ps", "softdpu")]}
    ppid_d = {r["pid"]: r["ppid"] for r in answers[("ps", "drgn")]}
    bad = sorted(p for p in ppid_s.keys() & ppid_d.keys() if ppid_s[p] != ppid_d[p])
    print(f"  ppid differs for {len(bad)} common pids" + (f": {bad[:20]}" if bad else ""))
    results["ps_diff"]["ppid_differs"] = bad
    mod_s = {r["name"] for r in answers[("modules", "softdpu")]}
    mod_d = {r["name"] for r in answers[("modules", "drgn")]}
    results["modules_diff"] = diff("modules (name)", mod_s, mod_d)
    gt = a.ground_truth or os.path.join(os.path.dirname(a.core), "ground-truth.txt")
    if os.path.exists(gt):
        # Taken when the guest became ready, before the snapshot: the process that wrote it (and
        # any that exited since) is expected to be missing. The guest's /proc names kernel threads
        # in full (kworker/0:1-events, rcu_tasks_kthread) where task->comm holds 15 characters,
        # so names are checked as prefixes.
        gt_procs, gt_mods = ground_truth(gt)
        gt_comm = dict(gt_procs)
        print(f"against the guest's own /proc when it booted ({gt}):")
        results["ground_truth"] = {}
        for tool, procs, mods in (("softdpu", ps_s, mod_s), ("drgn", ps_d, mod_d)):
            comm = dict(procs)
            r = diff("  pids", set(comm), set(gt_comm), tool, "guest")
            r["comm_differs"] = sorted(p for p in comm.keys() & gt_comm.keys() if not gt_comm[p].startswith(comm[p]))
            print(f"  {tool}: comm not a prefix of the guest's name for {len(r['comm_differs'])} pids")
            r["modules"] = diff("  modules", mods, gt_mods, tool, "guest")
            results["ground_truth"][tool] = r
    agree = not (results["ps_diff"]["only_softdpu"] or results["ps_diff"]["only_drgn"] or bad or
                 results["modules_diff"]["only_softdpu"] or results["modules_diff"]["only_drgn"])
    results["agree"] = agree
    results["load_average_after"] = os.getloadavg()
    print("load average after: " + " ".join(f"{x:.2f}" for x in results["load_average_after"]))
    print("answers agree" if agree else "answers DIFFER (see above)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
