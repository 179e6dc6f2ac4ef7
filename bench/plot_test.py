#!/usr/bin/env python3
"""Checks bench/plot.py and the placement classes of bench/memif_bench.py and bench/dma_placement.py.

    bench/plot_test.py [PYTHON_WITH_MATPLOTLIB]   (default /usr/bin/python3; exit 77 without matplotlib)

plot.py is run on the committed data (bench/results) and on small made-up inputs written here
(a round whose baseline slot was not counted, an unprobed round, a failed benchmark, an aggregate
row, the page-by-page YARA variant): what it takes from the made-up inputs is checked value by
value, every SVG must parse as XML with an <svg> root and carry the title that names its input,
and two runs on the same data must give the same files. With no input at all plot.py must fail.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree from the imports below


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_placements():
    memif = load("memif_bench")
    assert memif.round_placement([80, 90, 120]) == "close"
    assert memif.round_placement([400, 650]) == "far"
    assert memif.round_placement([80, 400]) == "mixed"
    assert memif.round_placement([250]) == "mixed"
    assert memif.round_placement([80, 3000]) == "descheduled"
    assert memif.round_placement([None, 80]) is None
    dma = load("dma_placement")
    assert dma.placement(70, 90) == "close"
    assert dma.placement(360, 370) == "far"
    assert dma.placement(76, 361) == "mixed"
    assert dma.placement(400, 1500) == "descheduled"


def run_plot(python, results, out):
    return subprocess.run([python, os.path.join(HERE, "plot.py"), "--results", results, "--out", out],
                          capture_output=True, text=True)


def check_svg(path, expected_text):
    assert os.path.getsize(path) > 0, path
    root = ElementTree.parse(path).getroot()
    assert root.tag.endswith("svg"), f"{path}: root is {root.tag}"
    with open(path) as svg:
        text = svg.read()
    # plot.py keeps text as SVG text (svg.fonttype none).
    assert expected_text in text, f"{path}: '{expected_text}' not found"


def made_up_inputs(folder):
    record = lambda size, number, placement, pairings: {  # noqa: E731
        "size": size, "round": number, "order": list(pairings), "probes_ns": None, "placement": placement,
        "pairings": pairings}
    rate = lambda pps, ratio: {"pps": pps, "tx_cpu": 1.0, "rx_cpu": 1.0, "fill": 0, "ratio": ratio}  # noqa: E731
    memif = {
        "benchmark": "memif_bench", "load_average_before": "0.5 0.4 0.3", "load_average_after": "0.6 0.4 0.3",
        "rounds": 3, "slot_s": 1.0, "sizes": [64], "baseline_pairing": "testpmd -> testpmd",
        "pairings": ["ours -> ours", "testpmd -> testpmd"],
        "records": [
            record(64, 1, "close", {"ours -> ours": rate(2e6, 2.0), "testpmd -> testpmd": rate(1e6, 1.0)}),
            record(64, 2, None, {"ours -> ours": rate(2e6, 1.5), "testpmd -> testpmd": rate(1e6, 1.0)}),
            record(64, 3, "far", {"ours -> ours": rate(2e6, None)}),  # baseline slot not counted
        ]}
    dma = {"benchmark": "dma_placement", "load_average_before": "0.5 0.4 0.3", "load_average_after": "0.6 0.4 0.3",
           "runs": 2, "min_time_s": 1.0,
           "placement_thresholds_ns": {"close_below": 200, "far_from": 300, "descheduled_from": 1500},
           "rows": [{"run": 1, "load_average": "0.5 0.4 0.3", "pingpong_before_ns": 70, "pingpong_after_ns": 75,
                     "placement": "close", "dma_over_memcpy": 0.95, "dma_GBps": 57.0, "memcpy_GBps": 60.0},
                    {"run": 2, "load_average": "0.5 0.4 0.3", "pingpong_before_ns": 76, "pingpong_after_ns": 361,
                     "placement": "mixed", "dma_over_memcpy": 0.94, "dma_GBps": 56.0, "memcpy_GBps": 59.0}]}
    bench = lambda name, ratio, **extra: dict({"name": name, "run_name": name, "run_type": "iteration",  # noqa: E731
                                               "ratio": ratio}, **extra)
    yara = {"context": {"load_avg": [0.5, 0.4, 0.3]},
            "benchmarks": [bench("BM_YaraRatio/4096/4096", 1.05), bench("BM_YaraRatio/4096/4096", 1.07),
                           bench("BM_YaraRatio/1024/512", 0.97),
                           bench("BM_YaraGuestRatio/4096/4096/0", 0.85),
                           bench("BM_YaraGuestRatio/4096/4096/1", 0.5),
                           bench("BM_YaraGuestRatio/8192/8192/0", 0.0, error_message="scan failed"),
                           {"name": "BM_YaraRatio/4096/4096_median", "run_name": "BM_YaraRatio/4096/4096",
                            "run_type": "aggregate", "aggregate_name": "median", "ratio": 9.0}]}
    for name, document in (("memif.json", memif), ("dma_placement.json", dma), ("yara.json", yara)):
        with open(os.path.join(folder, name), "w") as out:
            json.dump(document, out)
    return memif, yara


def check_selection(python, memif, yara):
    """What plot.py takes from the inputs, checked in the Python that has matplotlib."""
    code = f"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("plot", {os.path.join(HERE, "plot.py")!r})
plot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(plot)
memif, yara = json.loads(sys.stdin.read())
print(json.dumps({{"memif": plot.memif_points(memif, 64, "ours -> ours"),
                  "yara": sorted([list(k), v] for k, v in plot.yara_runs(yara).items())}}))
"""
    result = subprocess.run([python, "-B", "-c", code], input=json.dumps([memif, yara]), capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr
    chosen = json.loads(result.stdout)
    # The round whose baseline slot was not counted has no ratio: left out.
    assert chosen["memif"] == [[2.0, "close"], [1.5, None]], chosen["memif"]
    # Repetitions only: no aggregate (9.0), no failed run, no page-by-page reader (/1).
    assert chosen["yara"] == [[["BM_YaraGuestRatio", 4096, 4096], [0.85]],
                              [["BM_YaraRatio", 1024, 512], [0.97]],
                              [["BM_YaraRatio", 4096, 4096], [1.05, 1.07]]], chosen["yara"]


TITLES = {"memif.json": ("memif_ratio.svg", "libmemif"), "dma_placement.json": ("dma_placement.svg", "BM_Dma1MiBVsMemcpy"),
          "yara.json": ("yara_window.svg", "YARA window scan"),
          "apsh_scale.json": ("apsh_scale.svg", "App Shield at scale")}


def expected_plots(results):
    """{relative path of an SVG: text it must hold} for the inputs in results and its folders."""
    expected = {}
    for folder in [""] + sorted(n for n in os.listdir(results) if os.path.isdir(os.path.join(results, n))):
        for source, (target, title) in TITLES.items():
            if os.path.exists(os.path.join(results, folder, source)):
                expected[os.path.join(folder, target)] = title
    return expected


def written(out):
    return sorted(os.path.relpath(os.path.join(d, f), out) for d, _, files in os.walk(out) for f in files)


def main():
    python = sys.argv[1] if len(sys.argv) > 1 else "/usr/bin/python3"
    check_placements()
    if subprocess.run([python, "-c", "import matplotlib"], capture_output=True).returncode != 0:
        print(f"SKIP: {python} has no matplotlib (python3-matplotlib)")
        return 77
    with tempfile.TemporaryDirectory(prefix="softdpu-plot-test.") as work:
        empty, out = os.path.join(work, "empty"), os.path.join(work, "out")
        os.makedirs(os.path.join(empty, "a-set"))
        result = run_plot(python, empty, out)
        assert result.returncode == 1, f"no input: exit {result.returncode}\n{result.stdout}{result.stderr}"

        made_up = os.path.join(work, "made-up")
        os.makedirs(os.path.join(made_up, "second"))
        check_selection(python, *made_up_inputs(made_up))
        with open(os.path.join(made_up, "yara.json")) as a, open(os.path.join(made_up, "second", "yara.json"), "w") as b:
            b.write(a.read())  # a set of its own with one input: one plot in out/second

        for number, (results, name) in enumerate(((os.path.join(HERE, "results"), "committed"), (made_up, "made-up"))):
            out = os.path.join(work, f"out-{number}")
            result = run_plot(python, results, out)
            assert result.returncode == 0, f"{name} data: exit {result.returncode}\n{result.stdout}{result.stderr}"
            expected = expected_plots(results)
            assert expected, f"{name} data: no input found"
            assert written(out) == sorted(expected), f"{name} data: wrote {written(out)}, expected {sorted(expected)}"
            for svg, title in expected.items():
                check_svg(os.path.join(out, svg), title)
            # Same data, same files: the plots can be regenerated without spurious diffs.
            again = os.path.join(work, f"again-{number}")
            assert run_plot(python, results, again).returncode == 0
            for svg in expected:
                with open(os.path.join(out, svg), "rb") as a, open(os.path.join(again, svg), "rb") as b:
                    assert a.read() == b.read(), f"{svg}: two runs on the same data differ"
            print(f"plot.py on the {name} data: {len(expected)} SVGs, reproducible")
    print("placement classes and data selection: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
