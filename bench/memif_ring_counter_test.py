#!/usr/bin/env python3
"""Checks bench/memif_ring_counter against a ring whose indexes this script moves by known steps.

    memif_ring_counter_test.py PATH_TO_MEMIF_RING_COUNTER

1. Steps of 10,000 packets, 80 of them inside the counter's window: the count must be exactly
   800,000, twelve wraps of the 16-bit index, and what the counter saw between two readings must be
   whole steps of ours (several only if this machine held the counter up).
2. Steps of 60,000: still counted exactly (the index only moves forward), but max_step reports them,
   which is what makes bench/memif_bench.py drop such a slot (a longer step could hide a wrap).
3. The fill (head - tail) is reported as the median of the readings.
4. A ring at RING_OFFSET (a client's receive ring, after its transmit ring) is counted there (ring 0
   does not move: a counter reading it would count nothing).
"""
import ctypes
import mmap
import os
import subprocess
import sys
import tempfile
import time

RING_HEAD_OFFSET = 6
RING_TAIL_OFFSET = 64


def mapped(pid, path):
    try:
        with open(f"/proc/{pid}/maps") as maps:
            return os.path.realpath(path) in maps.read()
    except OSError:
        return False


def run(counter, step, steps, fill, pause=0.005, ring_offset=0):
    size = ring_offset + 8192
    with tempfile.NamedTemporaryFile() as region:
        region.write(bytes(size))
        region.flush()
        shared = mmap.mmap(region.fileno(), size)
        # Aligned 16-bit stores, as a memif peer makes them (a torn index would be a wrong test).
        head = ctypes.c_uint16.from_buffer(shared, ring_offset + RING_HEAD_OFFSET)
        tail = ctypes.c_uint16.from_buffer(shared, ring_offset + RING_TAIL_OFFSET)
        head.value = fill
        command = [counter, region.name, "3.0"] + ([str(ring_offset)] if ring_offset else [])
        reader = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
        # Every step must fall inside the counter's window: start once it has mapped the region
        # (its first reading follows at once), and keep well within its 3 s even on a busy machine.
        deadline = time.monotonic() + 2
        while not mapped(reader.pid, region.name):
            if time.monotonic() > deadline:
                reader.kill()
                sys.exit("memif_ring_counter never mapped the region")
            time.sleep(0.01)
        time.sleep(0.05)
        index = 0
        for _ in range(steps):
            index = (index + step) & 0xFFFF
            head.value = (index + fill) & 0xFFFF
            tail.value = index
            time.sleep(pause)
        output, _ = reader.communicate(timeout=10)
        del head, tail
        shared.close()
    if reader.returncode != 0:
        sys.exit(f"memif_ring_counter exited with {reader.returncode}")
    return {key: float(value) for key, value in (field.split("=") for field in output.split())}


def expect(condition, what, counted):
    if not condition:
        sys.exit(f"FAIL: {what}: {counted}")


def main():
    counter = sys.argv[1]
    counted = run(counter, 10000, 80, 100)
    expect(counted["packets"] == 800000, "10,000-packet steps counted exactly across 12 wraps", counted)
    expect(counted["max_step"] % 10000 == 0 and 10000 <= counted["max_step"] <= 60000,
           "steps between readings are whole steps of ours", counted)
    expect(counted["fill_median"] == 100, "median fill", counted)
    expect(2.99 <= counted["seconds"] < 4, "window length", counted)

    counted = run(counter, 60000, 10, 0, pause=0.02)  # two steps between readings would be a wrap
    expect(counted["packets"] == 600000, "60,000-packet steps counted", counted)
    expect(counted["max_step"] >= 57344, "a step near a wrap is reported", counted)

    # The second ring of a 1024-slot client: 128 + 16 * 1024 bytes in (not page-aligned).
    counted = run(counter, 10000, 20, 7, ring_offset=16512)
    expect(counted["packets"] == 200000 and counted["fill_median"] == 7, "a ring at an offset", counted)
    bad = subprocess.run([counter, "/dev/null", "1", "100"], capture_output=True, text=True)
    expect(bad.returncode == 2 and "multiple of 64" in bad.stderr, "a ring offset off a cache line", bad)

    bad = subprocess.run([counter, "/nonexistent/region", "1"], capture_output=True, text=True)
    expect(bad.returncode != 0 and "nonexistent" in bad.stderr, "a missing region is an error", bad)
    bad = subprocess.run([counter], capture_output=True, text=True)
    expect(bad.returncode == 2 and "usage" in bad.stderr, "usage", bad)
    print("memif_ring_counter_test: all checks passed")


if __name__ == "__main__":
    main()
