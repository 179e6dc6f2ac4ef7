#!/usr/bin/env python3
"""ibv_devices and ibv_devinfo -v (rdma-core's, unchanged) on softdpu's libibverbs, checked
against the topology: every function of the side with an ibdev name is listed once, with the node
GUID and system image GUID derived from its MAC (EUI-64; the PF's for the system image), an active
Ethernet port, and a GID table of the link-local address, the IPv4-mapped address and the IPv6
address, each as RoCE v1 then v2. Nothing else is listed.

  devinfo_check.py SOFTDPU LIBDIR host|dpu [TOPOLOGY.json]

SOFTDPU is the softdpu command line (for the built-in topology); LIBDIR holds softdpu's
libibverbs.so.1. Exit status 77 when ibverbs-utils is not installed.
"""
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys


def eui64(mac):
    b = [int(x, 16) for x in mac.split(":")]
    return [b[0] ^ 2, b[1], b[2], 0xFF, 0xFE, b[3], b[4], b[5]]


def guid_text(eui):  # ibv_devinfo's form: 4 groups of 4 hex digits
    h = "".join(f"{x:02x}" for x in eui)
    return ":".join(h[i:i + 4] for i in range(0, 16, 4))


def expected_devices(topology, side):
    functions = topology.get(side, {}).get("functions", [])
    by_name = {f["name"]: f for f in functions}
    devices = {}
    for f in functions:
        if "mac" not in f:
            continue  # checked separately: no MAC, no derived identity (see below)
        pf = by_name.get(f.get("parent"), f)
        gids = [ipaddress.IPv6Address(bytes([0xFE, 0x80] + [0] * 6 + eui64(f["mac"])))]
        if "ipv4" in f:
            gids.append(ipaddress.IPv6Address("::ffff:" + f["ipv4"]))
        if "ipv6" in f:
            gids.append(ipaddress.IPv6Address(f["ipv6"]))
        devices[f["ibdev"]] = {
            "node_guid": guid_text(eui64(f["mac"])),
            "sys_image_guid": guid_text(eui64(pf["mac"])) if "mac" in pf else None,
            "gids": [(g, t) for g in gids for t in ("RoCE v1", "RoCE v2")],
        }
    return devices, [f["ibdev"] for f in functions], [f["ibdev"] for f in functions if f.get("available") is False]


def run(argv, env):
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    print(f"$ {' '.join(argv)}  (exit {result.returncode})\n{result.stdout}{result.stderr}", end="")
    return result


def parse_devinfo(text):
    """{hca_id: {field: value, 'gids': [(IPv6Address, type)]}} from ibv_devinfo -v."""
    devices = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^hca_id:\s+(\S+)", line)
        if m:
            current = devices.setdefault(m.group(1), {"gids": []})
            continue
        if current is None:
            continue
        m = re.match(r"^\s+GID\[\s*(\d+)\]:\s+([0-9a-f:.]+)(?:, (RoCE v[12]))?\s*$", line)
        if m:
            if int(m.group(1)) != len(current["gids"]):
                current["bad_index"] = True
            current["gids"].append((ipaddress.IPv6Address(m.group(2)), m.group(3)))
            continue
        m = re.match(r"^\s+(\w+):\s+(.*?)\s*$", line)
        if m and m.group(1) not in current:
            current[m.group(1)] = m.group(2)
    return devices


def main():
    softdpu, libdir, side = sys.argv[1:4]
    topology_file = sys.argv[4] if len(sys.argv) > 4 else None
    if shutil.which("ibv_devinfo") is None or shutil.which("ibv_devices") is None:
        print("devinfo_check.py: ibverbs-utils is not installed; skipped")
        return 77
    env = dict(os.environ, SOFTDPU_SIDE=side, LD_LIBRARY_PATH=libdir)
    if os.environ.get("SOFTDPU_VERBS_PRELOAD"):  # ASan: the runtime first, for the programs alone
        env["LD_PRELOAD"] = os.environ["SOFTDPU_VERBS_PRELOAD"]
    env.pop("SOFTDPU_TOPOLOGY", None)
    if topology_file:
        env["SOFTDPU_TOPOLOGY"] = topology_file
        with open(topology_file, encoding="utf-8") as f:
            topology = json.load(f)
    else:
        topology = json.loads(subprocess.run([softdpu, "topology", "default"], check=True,
                                             capture_output=True, text=True).stdout)
    expected, all_names, unavailable = expected_devices(topology, side)
    failures = []

    listing = run(["ibv_devices"], env)
    rows = re.findall(r"^\s+(\S+)\s+([0-9a-f]{16})\s*$", listing.stdout, re.M)
    if listing.returncode != 0:
        failures.append("ibv_devices failed")
    if sorted(name for name, _ in rows) != sorted(all_names):
        failures.append(f"ibv_devices lists {[n for n, _ in rows]}, the topology's {side} side has {all_names}")
    for name, guid in rows:
        if name in expected and guid != expected[name]["node_guid"].replace(":", ""):
            failures.append(f"ibv_devices: {name} has GUID {guid}, expected {expected[name]['node_guid']}")

    # A function the topology marks unavailable is listed but cannot be opened: ibv_devinfo says so
    # for it (and exits non-zero) and shows the others.
    info = run(["ibv_devinfo", "-v"], env)
    if (info.returncode != 0) != bool(unavailable):
        failures.append(f"ibv_devinfo -v exited {info.returncode} with unavailable devices {unavailable}")
    devices = parse_devinfo(info.stdout)
    openable = [n for n in all_names if n not in unavailable]
    if sorted(devices) != sorted(openable):
        failures.append(f"ibv_devinfo lists {sorted(devices)}, expected {sorted(openable)}")
    for name in unavailable:
        if run(["ibv_devinfo", "-d", name], env).returncode == 0:
            failures.append(f"ibv_devinfo -d {name} opened a device the topology marks unavailable")
    for name, want in expected.items():
        got = devices.get(name)
        if got is None:
            continue
        checks = [("node_guid", want["node_guid"]), ("state", "PORT_ACTIVE (4)"), ("link_layer", "Ethernet"),
                  ("vendor_id", "0x02c9"), ("phys_port_cnt", "1")]
        if want["sys_image_guid"]:
            checks.append(("sys_image_guid", want["sys_image_guid"]))
        for field, value in checks:
            if got.get(field) != value:
                failures.append(f"{name}: {field} is {got.get(field)!r}, expected {value!r}")
        if got["gids"] != want["gids"] or got.get("bad_index"):
            failures.append(f"{name}: GID table {[(str(g), t) for g, t in got['gids']]}, expected "
                            f"{[(str(g), t) for g, t in want['gids']]}")
        # One device alone (-d), as a program picks it.
        single = run(["ibv_devinfo", "-d", name], env)
        if single.returncode != 0 or parse_devinfo(single.stdout).keys() != {name}:
            failures.append(f"ibv_devinfo -d {name} does not show {name} alone")

    # Node GUIDs and GIDs name one device on the machine-local fabric: unique over both sides.
    other = "dpu" if side == "host" else "host"
    other_info = run(["ibv_devinfo", "-v"], dict(env, SOFTDPU_SIDE=other))
    seen = {}
    for which, table in ((side, devices), (other, parse_devinfo(other_info.stdout))):
        for name, dev in table.items():
            for key in [("guid", dev.get("node_guid"))] + [("gid", g) for g in sorted(set(g for g, _ in dev["gids"]))]:
                owner = seen.setdefault(key, f"{which}/{name}")
                if owner != f"{which}/{name}":
                    failures.append(f"{key[0]} {key[1]} of {which}/{name} is also {owner}'s")

    missing = run(["ibv_devinfo", "-d", "softdpu_no_such_device"], env)
    if missing.returncode == 0:
        failures.append("ibv_devinfo -d of an unknown device succeeded")

    for failure in failures:
        print("FAIL:", failure)
    print(f"devinfo_check.py: {len(expected)} device(s) of the {side} side checked, {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
