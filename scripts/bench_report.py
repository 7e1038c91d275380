#!/usr/bin/python3
"""bench_report.py OUT_DIR: turns the results scripts/run-benchmarks.sh left in OUT_DIR into
tables of ratios (appended to OUT_DIR/report.md) and gnuplot plots (OUT_DIR/*.png).

Inputs (each may be missing; a missing one is named in the report, never dropped silently):
  bench_*.json            wick's Google Benchmark results
  baseline_libtorch.json  benchmarks/libtorch/baseline_libtorch.cpp (same benchmark names)
  pytorch.json            benchmarks/train_step_pytorch.py --json (ms per step, same names)
  bench_data_parallel.log bench_data_parallel's printed table (images/s per configuration)
Every ratio is wick's time over the baseline's: below 1 means wick is faster."""
import json
import os
import re
import shutil
import subprocess
import sys

UNIT = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def load_gbench(path):
    """{name: real time in ms} of a Google Benchmark JSON file (median aggregate if repeated)."""
    if not os.path.exists(path):
        return None
    try:
        data = json.load(open(path))
    except (OSError, ValueError):
        return None
    out = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"])
        for suffix in ("/real_time", "/manual_time"):
            name = name.replace(suffix, "")
        out[name] = b["real_time"] * UNIT[b["time_unit"]]
        out.setdefault("_cpu", {})[name] = b["cpu_time"] * UNIT[b["time_unit"]]
        for k, v in b.items():
            if k in ("modules", "devices"):
                out.setdefault("_counters", {}).setdefault(name, {})[k] = v
    return out


def fmt_ms(v):
    if v is None:
        return "missing"
    return f"{v:.4f}" if v < 0.1 else f"{v:.3f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "missing"
    return f"{a / b:.2f}"


def main():
    out = sys.argv[1]
    wick = {}
    for name in ("bench_op_overhead", "bench_mlp_step", "bench_train_step", "bench_sequence_step", "bench_replicate"):
        r = load_gbench(os.path.join(out, name + ".json"))
        if r:
            wick.update({k: v for k, v in r.items() if k not in ("_counters", "_cpu")})
            wick.setdefault("_cpu", {}).update(r.get("_cpu", {}))
            if "_counters" in r:
                wick.setdefault("_counters", {}).update(r["_counters"])
    lt = load_gbench(os.path.join(out, "baseline_libtorch.json"))
    pt = None
    pt_path = os.path.join(out, "pytorch.json")
    if os.path.exists(pt_path):
        pt = json.load(open(pt_path)).get("ms_per_step")
    lines = []
    lines.append("\n## Ratios (wick's time / the baseline's; below 1: wick is faster)\n")
    lines.append(f"LibTorch baseline: {'ran' if lt else 'missing (libtorch-dev not installed or baseline_libtorch not built)'}; "
                 f"PyTorch baseline: {'ran' if pt else 'missing (python3-torch not importable)'}.\n")
    g = wick.get
    ltg = (lt or {}).get
    ptg = (pt or {}).get
    lines.append("\n### Targets (1 thread)\n")
    lines.append("Ratios of real (wall) time; where both sides are Google Benchmark programs the ratio of CPU time "
                 "(the process's own, all threads) is given too: on a loaded machine wall time also counts time spent "
                 "waiting for a core.\n")
    lines.append("| workload | wick ms | baseline | baseline ms | ratio | ratio of CPU time | target |")
    lines.append("|---|---|---|---|---|---|---|")
    wcpu = wick.get("_cpu", {})
    lcpu = (lt or {}).get("_cpu", {})
    rows = [
        ("MLP 784-256-256-10 SGD step", "BM_MlpStepSGD/64", "the 8 GEMMs (OpenBLAS)", g("BM_MlpGemmBound/64"),
         wcpu.get("BM_MlpGemmBound/64"), "<= 1.15"),
        ("MLP 784-256-256-10 SGD step", "BM_MlpStepSGD/64", "the 8 GEMMs and a momentum-SGD pass (plain loops)",
         g("BM_MlpGemmSgdBound/64"), wcpu.get("BM_MlpGemmSgdBound/64"), ""),
        ("MLP 784-256-256-10 SGD step", "BM_MlpStepSGD/64", "LibTorch", ltg("BM_MlpStepSGD/64"),
         lcpu.get("BM_MlpStepSGD/64"), "<= 0.9"),
        ("MLP 784-256-256-10 SGD step", "BM_MlpStepSGD/64", "PyTorch", ptg("BM_MlpStepSGD/64"), None, ""),
        ("demo CNN Adam step", "BM_TrainStepAdam/64", "PyTorch", ptg("BM_TrainStepAdam/64"), None, "<= 0.8"),
        ("demo CNN SGD step", "BM_TrainStepSGD/64", "PyTorch", ptg("BM_TrainStepSGD/64"), None, "<= 0.8"),
        ("demo CNN Adam step", "BM_TrainStepAdam/64", "LibTorch", ltg("BM_TrainStepAdam/64"),
         lcpu.get("BM_TrainStepAdam/64"), ""),
        ("demo CNN SGD step", "BM_TrainStepSGD/64", "LibTorch", ltg("BM_TrainStepSGD/64"),
         lcpu.get("BM_TrainStepSGD/64"), ""),
        ("transformer step (2 blocks, d128, T64, b32)", "BM_TransformerStep/32", "PyTorch",
         ptg("BM_TransformerStep/32"), None, "<= 1.0"),
        ("transformer step (2 blocks, d128, T64, b8)", "BM_TransformerStep/8", "PyTorch",
         ptg("BM_TransformerStep/8"), None, "<= 1.0"),
        ("LSTM step (2 layers, h128, T32, b64)", "BM_LstmStep/64", "PyTorch", ptg("BM_LstmStep/64"), None, ""),
        ("LSTM step (2 layers, h128, T32, b16)", "BM_LstmStep/16", "PyTorch", ptg("BM_LstmStep/16"), None, ""),
        ("float32 add 64x64", "BM_add_64x64_nograd", "LibTorch", ltg("BM_add_64x64_nograd"),
         lcpu.get("BM_add_64x64_nograd"), "<= 0.5"),
        ("float32 add, 1 element", "BM_add_1_nograd", "LibTorch", ltg("BM_add_1_nograd"), lcpu.get("BM_add_1_nograd"),
         "<= 0.25"),
    ]
    for label, key, base, base_ms, base_cpu, target in rows:
        cpu_ratio = ratio(wcpu.get(key), base_cpu) if base_cpu is not None else "n/a"
        lines.append(f"| {label} | {fmt_ms(g(key))} | {base} | {fmt_ms(base_ms)} | {ratio(g(key), base_ms)} | "
                     f"{cpu_ratio} | {target} |")

    plots = []
    # Step time against batch size.
    lines.append("\n### Step time against batch size (ms per step)\n")
    lines.append("| workload | batch | wick | LibTorch | PyTorch | wick/LibTorch | wick/PyTorch |")
    lines.append("|---|---|---|---|---|---|---|")
    step_data = []
    for key, label in (("BM_MlpStepSGD", "MLP SGD"), ("BM_TrainStepAdam", "CNN Adam"), ("BM_TrainStepSGD", "CNN SGD")):
        for batch in (16, 64, 256):
            k = f"{key}/{batch}"
            w, l, p = g(k), ltg(k), ptg(k)
            lines.append(f"| {label} | {batch} | {fmt_ms(w)} | {fmt_ms(l)} | {fmt_ms(p)} | {ratio(w, l)} | {ratio(w, p)} |")
            step_data.append((label, batch, w, l, p))
    # Op time against size.
    lines.append("\n### float32 add: time against size (us per op)\n")
    lines.append("| elements | wick | LibTorch | wick/LibTorch |")
    lines.append("|---|---|---|---|")
    sizes = sorted(int(k.split("/")[1]) for k in wick if k.startswith("BM_add_size/"))
    op_data = []
    for n in sizes:
        w, l = g(f"BM_add_size/{n}"), ltg(f"BM_add_size/{n}")
        lines.append(f"| {n} | {w * 1e3:.3f} | {'missing' if l is None else f'{l * 1e3:.3f}'} | {ratio(w, l)} |")
        op_data.append((n, w, l))
    # Replicate cost.
    rep = sorted((k for k in wick if k.startswith("BM_replicate/")), key=lambda k: [int(x.split(":")[1]) for x in k.split("/")[1:3]])
    rep_data = []
    if rep:
        lines.append("\n### replicate: ms per call against module count and device count\n")
        lines.append("| tree | modules | devices | ms |")
        lines.append("|---|---|---|---|")
        for k in rep:
            parts = dict(x.split(":") for x in k.split("/")[1:3])
            mods = wick.get("_counters", {}).get(k, {}).get("modules", float("nan"))
            lines.append(f"| {parts['tree']} | {mods:.0f} | {parts['devices']} | {g(k):.3f} |")
            rep_data.append((int(parts["tree"]), mods, int(parts["devices"]), g(k)))
    else:
        lines.append("\nreplicate: missing (bench_replicate.json)\n")
    # DataParallel throughput.
    dp_data = []
    dp_ceiling = []  # (model, DataParallel's percent of the 2 separate models)
    handoff = None
    dp_log = os.path.join(out, "bench_data_parallel.log")
    if os.path.exists(dp_log):
        model = None
        for line in open(dp_log):
            h = re.match(r"a cache line moves between CPUs 0 and 1 in (\d+) ns", line)
            if h:
                handoff = int(h.group(1))
            if line and not line.startswith(" ") and ("CNN" in line or "MLP" in line):
                model = line.strip()
            m = re.match(r"\s+(.+?)\s+(\d+) images/s\s+([\d.]+)x", line)
            if m and model:
                devices = 2 if "DataParallel" in m.group(1) or "separate models" in m.group(1) else 1
                dp_data.append((model, m.group(1), devices, float(m.group(2)), float(m.group(3))))
            c = re.match(r"\s+DataParallel runs at (\d+)% of the 2 separate models", line)
            if c and model:
                dp_ceiling.append((model, int(c.group(1))))
    if dp_data:
        lines.append("\n### DataParallel throughput (images/s, ratio to 1 device, 1 thread)\n")
        lines.append("| model | configuration | devices | images/s | ratio |")
        lines.append("|---|---|---|---|---|")
        for model, conf, dev, ips, r in dp_data:
            lines.append(f"| {model} | {conf} | {dev} | {ips:.0f} | {r:.2f} |")
        for model, pct in dp_ceiling:
            lines.append(f"\n{model}: DataParallel runs at {pct}% of two separate half-batch models (its ceiling "
                         "here); the replicate, the gradient sum and the shared optimizer step cost the rest.")
        if handoff is not None:
            # The thresholds bench_data_parallel prints: tens of ns, a shared cache; 150 or more, none.
            if handoff < 100:
                meaning = "the two cores share a cache."
            elif handoff >= 150:
                meaning = ("the two cores share no cache, and every two-thread row pays for the bytes "
                           "its threads pass each other (docs/parallel.md, \"13th session\").")
            else:
                meaning = "between a shared cache (tens of ns) and none (150 ns or more)."
            lines.append(f"\nA cache line moved between CPUs 0 and 1 in {handoff} ns: {meaning}\n")
    else:
        lines.append("\nDataParallel: missing (bench_data_parallel.log)\n")

    # Plots.
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        lines.append("\nPlots: missing (gnuplot not installed: apt-get install gnuplot-nox)\n")
    else:
        def plot(name, script, datasets):
            for fname, rows_ in datasets.items():
                with open(os.path.join(out, fname), "w") as f:
                    for row in rows_:
                        f.write(" ".join("NaN" if v is None else str(v) for v in row) + "\n")
            full = f"set terminal pngcairo size 800,500 noenhanced\nset output '{name}.png'\nset grid\nset key left top\n" + script
            with open(os.path.join(out, name + ".gp"), "w") as f:
                f.write(full)
            r = subprocess.run([gnuplot, name + ".gp"], cwd=out, capture_output=True, text=True)
            ok = r.returncode == 0 and os.path.exists(os.path.join(out, name + ".png"))
            plots.append((name, ok, r.stderr.strip()[-300:]))

        plot("op_time_vs_size",
             "set title 'float32 add: time per op against size'\nset logscale xy\nset xlabel 'elements'\n"
             "set ylabel 'us per op'\nplot 'op_size.dat' u 1:($2*1000) w lp t 'wick', '' u 1:($3*1000) w lp t 'LibTorch'\n",
             {"op_size.dat": op_data})
        for label, fname in (("MLP SGD", "step_mlp"), ("CNN Adam", "step_cnn_adam"), ("CNN SGD", "step_cnn_sgd")):
            plot(fname,
                 f"set title '{label} step time against batch size'\nset logscale x 2\nset xlabel 'batch'\n"
                 f"set ylabel 'ms per step'\nplot '{fname}.dat' u 1:2 w lp t 'wick', '' u 1:3 w lp t 'LibTorch', "
                 "'' u 1:4 w lp t 'PyTorch'\n",
                 {f"{fname}.dat": [(b, w, l, p) for lab, b, w, l, p in step_data if lab == label]})
        trees = sorted({t for t, _, _, _ in rep_data})
        if rep_data:
            plot("replicate_vs_modules",
                 "set title 'replicate: ms per call against module count'\nset logscale xy\nset xlabel 'modules'\n"
                 "set ylabel 'ms'\nplot " + ", ".join(
                     f"'replicate.dat' u (($3=={d})?$2:1/0):4 w lp t '{d} devices'" for d in (1, 2, 4, 8)) + "\n",
                 {"replicate.dat": [(t, m, d, ms) for t, m, d, ms in rep_data]})
            plot("replicate_vs_devices",
                 "set title 'replicate: ms per call against device count'\nset logscale y\nset xlabel 'devices'\n"
                 "set ylabel 'ms'\nplot " + ", ".join(
                     f"'replicate.dat' u (($1=={t})?$3:1/0):4 w lp t 'tree {t}'" for t in trees) + "\n",
                 {"replicate.dat": [(t, m, d, ms) for t, m, d, ms in rep_data]})
        if dp_data:
            models = sorted({m for m, *_ in dp_data})
            rows_ = [(i, dev, ips) for i, model in enumerate(models) for (m, conf, dev, ips, r) in dp_data
                     if m == model and "2 threads" not in conf]
            plot("data_parallel_vs_devices",
                 "set title 'DataParallel throughput against CPU devices (1 thread each)'\nset xlabel 'devices'\n"
                 "set ylabel 'images/s'\nset xrange [0.5:2.5]\nset xtics 1\nplot " + ", ".join(
                     f"'data_parallel.dat' u (($1=={i})?$2:1/0):3 w lp t '{m}'" for i, m in enumerate(models)) + "\n",
                 {"data_parallel.dat": rows_})
        lines.append("\n### Plots\n")
        for name, ok, err in plots:
            lines.append(f"- {name}.png" + ("" if ok else f": FAILED ({err})"))
            if ok:
                lines.append(f"\n  ![{name}]({name}.png)\n")
        expected = {"op_time_vs_size", "step_mlp", "step_cnn_adam", "step_cnn_sgd", "replicate_vs_modules",
                    "replicate_vs_devices", "data_parallel_vs_devices"}
        for name in sorted(expected - {p[0] for p in plots}):
            lines.append(f"- {name}.png: missing (no data)")
    with open(os.path.join(out, "report.md"), "a") as f:
        f.write("\n".join(lines) + "\n")
    failed = [p for p in plots if not p[1]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
