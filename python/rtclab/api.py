"""The CLI's features as Python functions (`rtclab.save`, `rtclab.report`,
`rtclab.compare_engines`, `rtclab.reproduce`, `rtclab.benchmark`, `rtclab.emu_shell`;
`rtclab.run` and `rtclab.validate` live in `runner` and `scenarios`). The names differ from the
CLI's where a submodule already has the CLI's (`rtclab.compare`, `rtclab.repro`,
`rtclab.bench`). Each writes output only where asked (`out`), with the same rules as
the CLI: atomically, and never over a folder rtclab did not write (`OutputError`)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from rtclab.runner import RunResult


def _inputs_of(result: RunResult) -> list[Path]:
    """The files a result's scenario read (its own file, traces): folders holding them are
    never replaced."""
    from rtclab.scenarios import ScenarioSource, input_files

    text = result.scenario_text or ""
    fmt = "json" if text.lstrip().startswith("{") else "toml"
    src = ScenarioSource(text, fmt, result.scenario_base_dir or ".", result.scenario_origin)
    return input_files(src)


def save(result: RunResult, out: str | os.PathLike, plots: bool = True) -> Path:
    """Writes a result folder exactly as `rtclab run --out` does (summary.json, Parquet series,
    the rerunnable scenario.toml, plots and report.html unless `plots=False`); returns it."""
    from rtclab.output import write_result

    return write_result(result, out, plots=plots, inputs=_inputs_of(result))


def run_to_folder(scenario, out: str | os.PathLike | None = None, *, seed: Optional[int] = None,
                  engine: str = "sim", capture: bool = False, snaplen: int = 0, capture_at: str = "delivered",
                  plots: bool = True, force: bool = False, max_memory: Any = None,
                  progress: bool | None = None) -> tuple[RunResult, Path]:
    """`rtclab run`: runs the scenario and writes its result folder (default
    `rtclab-out/<scenario>`); returns the result and the folder. The folder is checked and held
    before the run, so nobody waits for a result that cannot be written; with `capture` (the
    emulator only) the bottleneck's pcap goes into the folder and nothing is left behind.
    Raises ScenarioNotFound, ConfigError, EmulatorUnsupported/EmulatorUnavailable, OutputError,
    and ValueError for a bad request."""
    import shutil
    import tempfile

    from rtclab.output import check_replaceable, default_out, locked, write_result
    from rtclab.runner import run
    from rtclab.scenarios import input_files, load_scenario

    src = load_scenario(scenario)
    if capture and engine != "emu":
        raise ValueError("--capture needs --engine emu (the simulator has no packets to capture)")
    if snaplen < 0:
        raise ValueError("--snaplen must be 0 (whole packets) or a positive number of bytes")
    out = str(default_out(scenario, src.origin)) if out is None else str(out)
    inputs = input_files(src)
    check_replaceable(Path(out).absolute(), out, inputs)
    with locked(out, out):
        pcap = Path(tempfile.mkdtemp(prefix="rtclab-capture-")) / "bottleneck.pcap" if capture else None
        try:
            result = run(scenario, seed=seed, progress=progress, engine=engine, capture=pcap, snaplen=snaplen,
                         force=force, max_memory=max_memory, capture_at=capture_at, encode_ahead=engine == "sim")
            written = write_result(result, out, plots=plots, inputs=inputs)
        finally:
            if pcap is not None:
                shutil.rmtree(pcap.parent, ignore_errors=True)
    return result, written


def hairpin_table(lam: float, out: str | os.PathLike | None = None,
                  compare: str | os.PathLike | None = None) -> dict[str, Any]:
    """`rtclab hairpin table`: solves Hairpin's lookup table for loss-rate weight `lam` (λ) and
    checks it against the spec's golden vectors and a published table (the shipped one for
    1e-4 and 1e-7, or `compare`); returns the report (`cells`, `solve_seconds`,
    `golden_vectors`, `published`, `out`) and writes the table and table.json to `out` (default
    rtclab-out/hairpin-table-<λ>; checked and held before solving). ValueError for a bad λ or
    comparison file, OutputError."""
    from rtclab import hairpin
    from rtclab.output import check_replaceable, locked

    if not (lam > 0 and lam < float("inf")):
        raise ValueError(f"--lambda must be a finite number > 0, got {lam}")
    if compare is not None and not Path(compare).is_file():
        raise ValueError(f"--compare {compare}: no such file")
    out = str(out) if out is not None else f"rtclab-out/hairpin-table-{lam:.0e}"
    check_replaceable(Path(out).absolute(), out, ())
    with locked(out, out):
        try:
            table, info = hairpin.table_report(lam, None if compare is None else str(compare))
        except ValueError as e:
            raise ValueError(f"--compare {compare}: {e}") from e
        info["out"] = str(hairpin.write_table(out, lam, table, info))
    return info


def _metis(kind: str, out, options: dict) -> dict[str, Any]:
    from rtclab.metis import command
    from rtclab.metis import autorun, deploy
    from rtclab.metis.options import AutoOptions, ConvertOptions, DeployOptions, DesignOptions, RtcOptions
    from rtclab.output import check_replaceable, locked, write_atomically

    cls, default, what, fn = {
        "convert": (ConvertOptions, "rtclab-out/metis-pensieve", "Metis conversion", command.run),
        "rtc": (RtcOptions, "rtclab-out/metis-rtc", "Metis RTC conversion", command.run_rtc),
        "design": (DesignOptions, "rtclab-out/metis-design", "Metis design case", command.run_design),
        "auto": (AutoOptions, "rtclab-out/metis-auto", "Metis AuTO study", autorun.run_auto),
        "deploy": (DeployOptions, "rtclab-out/metis-deploy", "Metis deployment case", deploy.run_deploy)}[kind]
    try:
        opts = cls(**options)
    except TypeError as e:
        known = ", ".join(cls.__dataclass_fields__)
        raise ValueError(f"metis {kind}: {e} (options: {known})") from e
    out = str(out) if out is not None else default
    check_replaceable(Path(out).absolute(), out, ())
    with locked(out, out):
        return fn(opts, lambda fill: write_atomically(out, fill, kind=what))


def metis_convert(out: str | os.PathLike | None = None, **options) -> dict[str, Any]:
    """`rtclab metis convert`: Pensieve's released actor -> a decision tree (tree.json, its SVG
    and HTML views, conversion.json in `out`, default rtclab-out/metis-pensieve); returns the
    conversion's summary. Options as `rtclab.metis.options.ConvertOptions` (iterations, videos,
    max_leaves, resample, holdout, seed, ...). ValueError, DataMissing, OutputError."""
    return _metis("convert", out, options)


def metis_rtc(out: str | os.PathLike | None = None, **options) -> dict[str, Any]:
    """`rtclab metis rtc`: a GCC-imitating DNN -> a tree (`cc = "tree"`), compared with gcc and
    gcc_paper on held-out calls; writes to `out` (default rtclab-out/metis-rtc) and returns the
    summary. Options as `rtclab.metis.options.RtcOptions`. ValueError, OutputError."""
    return _metis("rtc", out, options)


def metis_design(out: str | os.PathLike | None = None, **options) -> dict[str, Any]:
    """`rtclab metis design`: Metis's design case — Pensieve's A3C trained as released, the
    original network and the one with the last bitrate concatenated to its output layer, from the
    same seeds; writes curves.csv, design.json and design.png to `out` (default
    rtclab-out/metis-design) and returns the summary. Options as
    `rtclab.metis.options.DesignOptions` (iterations, seeds, eval_every, agents, traces).
    ValueError, DataMissing, OutputError; ImportError without the `learn` extra."""
    return _metis("design", out, options)


def metis_auto(out: str | os.PathLike | None = None, **options) -> dict[str, Any]:
    """`rtclab metis auto`: AuTO's sRLA (DDPG) and lRLA (REINFORCE) trained on rtclab's
    datacenter fabric (MLFQ + long-flow priority queues), converted by Metis (regression trees,
    a classification tree), and the FCT of DNNs, trees and baselines on the same held-out
    arrivals; writes auto.json, fct.png, the networks (.npz) and the trees (.json) to `out`
    (default rtclab-out/metis-auto) and returns the summary. Options as
    `rtclab.metis.options.AutoOptions` (workload, load, srla_steps, lrla_episodes, iterations,
    max_leaves, test_seeds, test_seconds, seed). ValueError, OutputError; ImportError without
    the `learn` extra."""
    return _metis("auto", out, options)


def metis_deploy(out: str | os.PathLike | None = None, **options) -> dict[str, Any]:
    """`rtclab metis deploy`: the deployment case in a real browser — dash.js pages with a fixed
    rule, Metis' Pensieve tree and Pensieve in TensorFlow.js, each loaded in headless Chromium
    (Playwright) over a throttled link and played; page size, page-load time, JS heap and decision
    time per page, and what the tree and the DNN add over `fixed`. Writes deploy.json, deploy.png,
    tree.json and the site itself (site/) to `out` (default rtclab-out/metis-deploy). Options as
    `rtclab.metis.options.DeployOptions` (tree, iterations, runs, seconds, rate_kbps, rtt_ms,
    chromium, seed). ValueError, OutputError; `rtclab.metis.browser.PageFailed` when a page does
    not get ready or reports an error; `rtclab.metis.browser.BrowserMissing` without
    Playwright or Chromium, `rtclab.metis.webassets.AssetsMissing` when dash.js/tf.js cannot be had."""
    return _metis("deploy", out, options)


def metis_dataset(out: str | os.PathLike, topologies: list[str] | tuple[str, ...] = ("nsfnet",), samples: int = 100,
                  k: int = 3, load: tuple[float, float] = (0.3, 0.9), duration_s: float = 10.0, seed: int = 1,
                  workers: Optional[int] = None, resume: bool = False) -> Path:
    """`rtclab metis dataset`: simulator runs as a data set for a learned network model (one run
    per sample: topology, k-shortest-path routing, Poisson traffic matrix; each path's delay) in
    the folder `out` (`--resume` completes one). DatasetError (a ValueError) on a bad request or
    a folder holding something else."""
    from rtclab.metis.netdata import DatasetSpec, generate

    return generate(DatasetSpec(list(topologies), samples, k, tuple(load), duration_s, seed), out, workers=workers,
                    resume=resume)


def metis_routenet(test: str | os.PathLike, out: str | os.PathLike = "rtclab-out/metis-routenet",
                   train: str | os.PathLike | None = None, model: str | os.PathLike | None = None, epochs: int = 20,
                   seed: int = 1, batch_size: int = 16, verbose: bool = False) -> dict[str, Any]:
    """`rtclab metis routenet`: trains the RouteNet-style delay model on the data set `train` (or
    loads `model`), measures its relative error per topology on `test`; writes model.npz,
    routenet.json and errors.png to `out` and returns the summary."""
    from rtclab.metis.globalsys import routenet_run

    return routenet_run(None if train is None else str(train), str(test), str(out),
                        model_path=None if model is None else str(model), epochs=epochs, seed=seed,
                        batch_size=batch_size, verbose=verbose)


def metis_explain(model: str | os.PathLike, out: str | os.PathLike = "rtclab-out/metis-explain", **options) -> dict[str, Any]:
    """`rtclab metis explain`: Metis' hypergraph interpretation of a RouteNet model and the reroute
    it suggests, evaluated by the model and in the simulator; writes explain.json,
    connections.csv, mask_loss.png and topology.png to `out`. Options: topo_name, k,
    routing_seed, traffic_seed, load, seeds, steps, top, duration_s, verbose."""
    from rtclab.metis.globalsys import explain_run

    return explain_run(str(model), str(out), **options)


def report(result: RunResult, out: str | os.PathLike) -> Path:
    """Writes only the plots and report.html of a result into the folder `out`; returns the
    report's path."""
    from rtclab import plots as plotting
    from rtclab import reporting
    from rtclab.output import write_atomically

    def fill(d: Path) -> None:
        reporting.write_report(result, plotting.plot_report(result, d), d / "report.html")

    return write_atomically(out, fill, _inputs_of(result), kind="report") / "report.html"


def compare_engines(scenario, seed: Optional[int] = None, runs: int = 1, out: str | os.PathLike | None = None,
                    progress: bool | None = None) -> dict[str, Any]:
    """`rtclab compare`: the scenario in both engines; returns {"sim": summary, "emu": summary,
    "diffs": [metric, sim, emu, tolerance, ok ...], "outside": the diffs outside tolerance,
    "table": the diffs as the CLI prints them, "out": the folder or None} and writes it to `out`
    if given (checked and held before the runs)."""
    import contextlib

    from rtclab.compare import compare as run_compare
    from rtclab.compare import format_diffs, write_compare
    from rtclab.output import check_replaceable, locked
    from rtclab.scenarios import input_files, load_scenario

    if runs < 1:
        raise ValueError(f"runs must be at least 1, got {runs}")
    inputs = input_files(load_scenario(scenario))
    if out is not None:
        check_replaceable(Path(out).absolute(), str(out), inputs)
    with locked(out, str(out)) if out is not None else contextlib.nullcontext():
        sim, emu, diffs = run_compare(scenario, seed=seed, progress=progress, runs=runs)
        path = write_compare(sim, emu, diffs, out, inputs) if out is not None else None
    return {"sim": sim, "emu": emu, "diffs": [d.as_dict() for d in diffs],
            "outside": [d.as_dict() for d in diffs if d.ok is False], "table": format_diffs(diffs), "out": path}


def reproduce(paper: str, runs: int = 10, jobs: Optional[int] = None, out: str | os.PathLike | None = None,
              progress: bool | None = None, only: str | set | None = None,
              store: str | os.PathLike | None = None) -> list[dict[str, Any]]:
    """`rtclab repro PAPER`: the paper's experiments; returns the rows (experiment, variant,
    metric, ours, paper, verdict) and writes repro.json, plots and report.html to `out` if given.
    `only`: some of the paper's experiments ("S1,S3" or a set; zhuge); `store`: keep every run in
    a resumable run store, as `--store` does. The same checks and orchestration as the CLI
    (`rtclab.repro.reproduce_paper`): ValueError for a bad request, DataMissing, OutputError."""
    import contextlib

    from rtclab.output import locked
    from rtclab.repro import reproduce_paper, write_outputs

    with locked(out) if out is not None else contextlib.nullcontext():
        outcome = reproduce_paper(paper, runs=runs, jobs=jobs, only=only, store=store, progress=progress)
        if out is not None:
            write_outputs(outcome.repro, outcome.rows, outcome.results, str(out), outcome.wall)
    return [r.as_dict() for r in outcome.rows]


def benchmark(engine: str = "sim", repeat: Optional[int] = None, out: str | os.PathLike | None = None,
              ns3: Optional[str] = None, progress: bool | None = None, htsim: Optional[str] = None,
              instructions: bool = False) -> dict[str, Any]:
    """`rtclab bench sim|emu|process` (the CLI calls this): returns the benchmark's figures;
    writes bench.json to `out`. `repeat`: runs (default 5 for sim, 3 for process; emu runs each
    part once). `ns3`, `htsim`: the programs `process` compares with (bench/ns3/build-optimized.sh
    and bench/htsim/build.sh build them); `instructions`: also count the loop's and htsim's
    instructions under callgrind. `progress`: each step on stderr (default: on a terminal)."""
    from rtclab.bench import bench_emu, bench_sim, write_bench

    if engine not in ("sim", "emu", "process"):
        raise ValueError(f"unknown engine {engine!r}: accepted 'sim', 'emu', 'process'")
    if repeat is None:
        repeat = 3 if engine == "process" else 5
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"--repeat must be at least 1, got {repeat!r}")
    for flag, prog, how in (("--ns3", ns3, "bench/ns3/build-optimized.sh"), ("--htsim", htsim, "bench/htsim/build.sh")):
        if prog is not None and not (os.path.isfile(prog) and os.access(prog, os.X_OK)):
            raise ValueError(f"{flag} {prog}: not an executable program ({how} builds it)")
        if prog is not None and engine != "process":
            raise ValueError(f"{flag} is for `rtclab bench process`, not {engine}")
    if instructions and (engine != "process" or htsim is None):
        raise ValueError("--instructions counts the loop's and htsim's instructions: it needs `rtclab bench process --htsim PROGRAM`")
    if engine == "sim":
        result = bench_sim(repeat=repeat, progress=progress)
    elif engine == "emu":
        result = bench_emu(progress=progress)
    else:
        from rtclab.bench_process import bench_process

        result = bench_process(ns3=ns3, htsim=htsim, repeat=repeat, progress=progress, instructions=instructions)
    if out is not None:
        write_bench(json.loads(json.dumps(result)), out)
    return result


def emu_shell(scenario, command: list[str], receiver: Optional[str] = None, seed: Optional[int] = None,
              out: str | os.PathLike | None = None, capture: bool = False,
              capture_at: str = "delivered", tcp_cc: Optional[str] = None,
              plots: bool = True) -> tuple[int, RunResult]:
    """`rtclab emu shell`: runs `command` (and `receiver`) through the scenario's emulated
    network; returns (the command's exit status, the network's RunResult), saved to `out` if
    given (with the pcap when `capture`: packets as delivered, or as sent with
    `capture_at="sent"`, what `classify` needs). `tcp_cc`: the kernel TCP congestion controller
    of the programs (default: the host's). The CLI's `rtclab emu shell` calls this."""
    import shutil
    import tempfile

    from rtclab.shell import run_shell

    if capture and out is None:
        raise ValueError("capture needs out (the capture is written into it)")
    tmp = Path(tempfile.mkdtemp(prefix="rtclab-capture-")) if capture else None
    try:
        if capture_at not in ("delivered", "sent"):
            raise ValueError(f"capture_at must be 'delivered' or 'sent', got {capture_at!r}")
        rc, result = run_shell(scenario, list(command), receiver=receiver, seed=seed,
                               capture=str(tmp / "bottleneck.pcap") if tmp else None,
                               capture_sent=capture_at == "sent", tcp_cc=tcp_cc)
        if out is not None:
            save(result, out, plots=plots)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return rc, result


def run_sweep(sweep, out: str | os.PathLike, workers: Optional[int] = None, resume: bool = False,
              progress: bool | None = None, report: bool = True, backend: str = "local",
              address: Optional[str] = None, force: bool = False):
    """`rtclab sweep`: runs a sweep file (or TOML text) into the store `out`; returns a
    `SweepOutcome` (runs, already in the store, run now, wall time). More than 10,000 runs need
    `force=True`. See `rtclab.sweep`."""
    from rtclab.output import locked
    from rtclab.sweep import run_sweep as _run

    with locked(out):
        return _run(sweep, out, workers=workers, resume=resume, progress=progress, report=report, backend=backend,
                    address=address, force=force)


def run_suite(suite: str, ccs: list[str] | tuple[str, ...] | None = None, seeds: int = 1,
              out: str | os.PathLike | None = None, workers: Optional[int] = None, resume: bool = False,
              progress: bool | None = None, force: bool = False) -> list[dict[str, Any]]:
    """`rtclab suite rfc8867|rfc8869|l4s`: every case for every controller (default: gcc; for
    l4s, prague) and seed into the store `out` (default `rtclab-out/suite-<suite>`); returns one
    row per case and controller (RFC 8868 metrics and media QoE; for l4s, rates, their ratio and
    each queue's delay), also in `out/suite.json` with the cases not run. More than 10,000 runs
    need `force=True`. The CLI calls this."""
    from rtclab.output import locked
    from rtclab.suites import default_ccs
    from rtclab.suites import run_suite as _run

    if ccs is None:
        ccs = default_ccs(suite)

    out = out if out is not None else f"rtclab-out/suite-{suite}"
    with locked(out):
        return _run(suite, list(dict.fromkeys(ccs)), seeds=seeds, out=out, workers=workers, resume=resume,
                    progress=progress, force=force)


def sweep_catalog(out: str | os.PathLike, flows: bool = False):
    """A sweep store's catalog as a DataFrame: one row per run (or per run and flow)."""
    from rtclab.sweep import catalog

    return catalog(out, flows=flows)
