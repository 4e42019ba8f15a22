"""The `rtclab` command line.

    rtclab run [SCENARIO] [--out DIR] [--seed N] [--engine sim|emu]
                                                 run a scenario file or built-in (default: "default")
                                                 in the simulator or the real-network emulator
    rtclab list                                  built-in scenarios
    rtclab validate SCENARIO...                  check scenario files without running them
    rtclab compare SCENARIO [--out DIR]          the scenario in both engines, metric by metric
    rtclab emu shell SCENARIO [--receiver CMD] [-- COMMAND...]
                                                 your own programs through the emulated link
    rtclab bench sim [--out DIR]                 simulator benchmark
    rtclab bench emu [--out DIR]                 emulator benchmark (throughput, release timing)
    rtclab data list|verify                      the shipped third-party data (models, traces, tables)
    rtclab --version

Exit status: 0 success, 1 `compare --strict` with a metric outside tolerance or `data verify` with a
damaged file, 2 bad input (scenario, arguments, output directory) or the emulator
cannot run here (not root, no /dev/net/tun), 130 interrupted (Ctrl-C or SIGTERM; the emulator
removes its namespaces first).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from pathlib import Path

from rtclab import __version__, _core, timings
from rtclab._core import ConfigError, EmulatorUnavailable, EmulatorUnsupported
from rtclab.datasets import DataMissing
from rtclab.runner import MAX_SEED

EXIT_BAD_INPUT = 2
EXIT_OUTSIDE_TOLERANCE = 1
EXIT_INTERRUPTED = 130


class UserError(Exception):
    """A problem with what the user asked for: message printed, exit status 2."""


def _scenario_error(origin: str, e: ConfigError) -> UserError:
    return UserError(f"{origin}: {e.args[0]}")


@contextlib.contextmanager
def _scenario_command(display: str, emu_words: str):
    """The errors a command that runs a scenario turns into user errors: the scenario's own
    (named with the file), what the emulator cannot run or cannot start, and output folders."""
    from rtclab.output import OutputError

    try:
        yield
    except ConfigError as e:
        raise _scenario_error(display, e) from e
    except EmulatorUnsupported as e:
        raise UserError(f"{display}: {e}") from e
    except EmulatorUnavailable as e:
        raise UserError(f"{emu_words}: {e}") from e
    except (OutputError, ValueError) as e:
        raise UserError(str(e)) from e


def _check_out(out: str, inputs=()) -> None:
    """Refuses, before any work, an output directory that rtclab would not be allowed to replace,
    or that another rtclab command is writing."""
    from rtclab.output import OutputError, check_replaceable, lock_out

    try:
        check_replaceable(Path(out).absolute(), out, inputs)
        lock_out(out, out)  # held until the command ends: a second command on this --out is refused
    except OutputError as e:
        raise UserError(str(e)) from e


def cmd_run(args: argparse.Namespace) -> int:
    from rtclab.api import run_to_folder
    from rtclab.scenarios import ScenarioNotFound, load_scenario

    try:
        src = load_scenario(args.scenario)
    except ScenarioNotFound as e:
        raise UserError(str(e)) from e
    _preload(plots=not args.no_plots)
    with _scenario_command(src.display, "--engine emu"):
        result, written = run_to_folder(
            args.scenario, args.out, seed=args.seed, engine=args.engine, capture=args.capture,
            snaplen=args.snaplen, capture_at=args.capture_at, plots=not args.no_plots, force=args.force,
            max_memory=args.max_memory, progress=None if not args.no_progress else False)
    print_summary(result.summary)
    _warn_if_host_stole_time(result.summary)
    print(f"results in {written}")
    timings.report(args.timings)
    return 0


#: Above this share of CPU time taken by the hypervisor during an emulation, say so: on this
#: project's 2-core VMs 3 % or more of steal went with release-error p99 above 1 ms and the
#: edge-streaming BWC 0.43-0.68 against 0.39-0.41 without (docs/emulator.md).
STEAL_WARN_PERCENT = 3.0


def _warn_if_host_stole_time(summary: dict) -> None:
    em = summary.get("emulator") or {}
    steal = em.get("host_steal_percent")
    if steal is not None and steal >= STEAL_WARN_PERCENT:
        p99 = (em.get("release_error_us") or {}).get("p99")
        print(f"note: the hypervisor took {steal:.1f} % of this machine's CPU time during the emulation "
              f"(packet release error p99 {_num(p99, '.0f', ' us')}); no priority inside the machine wins it "
              "back, so timing-sensitive results may differ from a run on a quiet host", file=sys.stderr)


def _preload(plots: bool) -> None:
    """Imports what the run's end needs — the console table's `tabulate` (0.04-0.08 s: it reads
    its own package metadata), the scenario copy's `rtclab.rerun` (and `tomllib`) and, with
    plots, the plots' modules — on a second thread while the run goes on: the simulation
    releases the GIL, so on a machine with two cores the imports cost no wall time. The import
    lock makes a later `import` wait for it."""
    import threading

    def load() -> None:
        try:
            import tabulate  # noqa: F401

            import rtclab.rerun  # noqa: F401

            if plots:
                import rtclab.plots  # noqa: F401
                import rtclab.reporting  # noqa: F401
        except Exception:  # the real import, later, reports it
            pass

    threading.Thread(target=load, name="rtclab-preload", daemon=True).start()


#: Flows listed on the console before the rest is summed up (all are in summary.json).
CONSOLE_FLOWS = 20


def _num(v, spec: str, unit: str = "") -> str:
    """A summary value for the console: missing values read "n/a", never 0."""
    return "n/a" if v is None else f"{v:{spec}}{unit}"


def print_summary(s: dict, out=None) -> None:
    """The console's view of a summary: the link, then the media flows leading with what a
    viewer sees (frame delay, frame rate, freezes), then the other flows (tables by tabulate)."""
    from tabulate import tabulate

    out = out or sys.stdout
    link = s["link"]
    verb = "emulated" if s.get("engine") == "emu" else "simulated"
    print(f"{s['scenario']}: {s['duration_s']:g} s {verb} in {s['wall_time_s']:.2f} s (seed {s['seed']})", file=out)
    print(
        f"  link: utilization {link['utilization']:.3f}, loss {link['loss_ratio']:.4f}, "
        f"queuing delay p50 {_num(link['queuing_delay_ms']['p50'], '.2f', ' ms')}, "
        f"Jain {_num(s['fairness']['jain'], '.3f')}",
        file=out,
    )
    flows = s["flows"]
    shown, rest = flows[:CONSOLE_FLOWS], flows[CONSOLE_FLOWS:]
    media = [f for f in shown if f.get("media")]
    other = [f for f in shown if not f.get("media")]

    def table(rows, headers):
        align = ("left", "left", *["right"] * (len(headers) - 2))
        text = tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True, colalign=align)
        print("\n".join("  " + ln for ln in text.splitlines()), file=out)

    if media:
        table(
            [[f"{f['id']} {f['name']}", f["cc"], _num(f["throughput_mbps"], ".2f"), _num(f["share"], ".3f"),
              _num(f["loss_ratio"], ".4f"), _num(f["media"]["frame_delay_ms"]["p50"], ".1f"),
              _num(f["media"]["frame_delay_ms"]["p95"], ".1f"), _num(f["media"]["frame_rate"], ".1f"),
              f["media"]["freezes"]] for f in media],
            ["media flow", "cc", "Mbit/s", "share", "loss", "frame delay p50 ms", "p95 ms", "fps", "freezes"],
        )
    if other:
        table(
            [[f"{f['id']} {f['name']}", f["cc"], _num(f["throughput_mbps"], ".2f"), _num(f["share"], ".3f"),
              _num(f["loss_ratio"], ".4f"), _num(f["queuing_delay_ms"]["p50"], ".2f"),
              _num(f["queuing_delay_ms"]["p95"], ".2f")] for f in other],
            ["flow", "cc", "Mbit/s", "share", "loss", "qdelay p50 ms", "p95 ms"],
        )
    if rest:
        mbps = sum(f["throughput_mbps"] for f in rest)
        print(f"  ... {len(rest)} more flows ({mbps:.2f} Mbit/s together; every flow is in summary.json)", file=out)


def cmd_list(args: argparse.Namespace) -> int:
    from rtclab.scenarios import builtin_description, builtin_scenarios

    items = builtin_scenarios()
    width = max(len(n) for n in items)
    for name, path in items.items():
        print(f"{name:<{width}}  {builtin_description(path)}")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from rtclab.scenarios import ScenarioNotFound, load_scenario, validate

    status = 0
    for s in args.scenarios:
        try:
            info = validate(s)
            c = info["cost"]
            print(f"ok: {s}: {info['name']}, {info['flows']} flow(s), {info['duration_s']:g} s, capacity {info['capacity']}; "
                  f"estimated at most {c['packet_hops']:.3g} packet-hops, {c['series_bytes'] / 2**20:.3g} MiB of time series")
            if c["over_limits"]:
                print(f"warning: {s}: {c['over_limits']}; `rtclab run` needs --force for it", file=sys.stderr)
            for w in info["warnings"]:
                print(f"warning: {s}: {w}", file=sys.stderr)
        except ScenarioNotFound as e:
            print(f"error: {e}", file=sys.stderr)
            status = EXIT_BAD_INPUT
        except ConfigError as e:
            print(f"error: {load_scenario(s).display}: {e.args[0]}", file=sys.stderr)
            status = EXIT_BAD_INPUT
    return status


SIM_BENCH_KEYS = ("sim_seconds_per_wall_second", "delivered_packets_per_wall_second", "events_per_wall_second",
                  "ratio_vs_ns3", "median", "gcc_call_300s_2mbps", "copa_100_flows_100s", "scaling_1_vs_1000_flows")
EMU_BENCH_KEYS = ("throughput_gbps", "packets_per_second", "offload_speedup_cubic", "release_error_us_p50",
                  "release_error_us_p99", "host_steal_percent_max")


def cmd_bench(args: argparse.Namespace) -> int:
    """Argument handling and printing over `rtclab.benchmark`."""
    from rtclab.api import benchmark
    from rtclab.bench import write_bench
    from rtclab.output import OutputError

    if args.out:
        _check_out(args.out)
    try:
        result = benchmark(args.engine, repeat=args.repeat, ns3=args.ns3, htsim=args.htsim,
                           instructions=args.instructions, progress=None if not args.no_progress else False)
    except ValueError as e:
        raise UserError(str(e)) from e
    except EmulatorUnavailable as e:
        raise UserError(f"bench emu: {e}") from e
    keys = {"sim": SIM_BENCH_KEYS, "emu": EMU_BENCH_KEYS}.get(
        args.engine, tuple(k for k in ("rtclab_no_plots", "rtclab_plots", "ns3", "ratios", "flows_1000") if k in result))
    shown = {k: result[k] for k in keys}
    if "htsim" in result:
        shown["htsim"] = {k: v for k, v in result["htsim"].items() if k != "pairs"}
    print(json.dumps(shown, indent=2))
    if args.out:
        try:
            path = write_bench(result, args.out)
        except OutputError as e:
            raise UserError(str(e)) from e
        print(f"wrote {path / 'bench.json'}")
    return 0


def cmd_emu_shell(args: argparse.Namespace) -> int:
    """Argument handling and printing over `rtclab.emu_shell`."""
    from rtclab.api import emu_shell
    from rtclab.output import OutputError
    from rtclab.scenarios import ScenarioNotFound, input_files, load_scenario

    try:
        src = load_scenario(args.scenario)
    except ScenarioNotFound as e:
        raise UserError(str(e)) from e
    if args.capture and not args.out:
        raise UserError("--capture needs --out DIR (the capture is written into it)")
    if args.out:
        _check_out(args.out, input_files(src))  # before the network starts
    try:
        rc, result = emu_shell(args.scenario, list(getattr(args, "trailing", [])), receiver=args.receiver,
                               seed=args.seed, out=args.out, capture=args.capture, capture_at=args.capture_at,
                               tcp_cc=args.tcp_cc, plots=not args.no_plots)
    except ConfigError as e:
        raise _scenario_error(src.display, e) from e
    except EmulatorUnavailable as e:
        raise UserError(f"emu shell: {e}") from e
    except OutputError as e:
        raise UserError(str(e)) from e
    except ValueError as e:  # --tcp-cc not available
        raise UserError(str(e)) from e
    s = result.summary
    link = s["link"]
    em = s["emulator"]
    print(f"rtclab emu shell: {em['packets_forwarded']} packets forwarded, "
          f"{sum(link['drops'].values())} dropped at the bottleneck, queuing delay p50 "
          f"{_num(link['queuing_delay_ms']['p50'], '.2f', ' ms')}, release error p99 "
          f"{_num(em['release_error_us']['p99'], '.0f', ' us')}", file=sys.stderr)
    _warn_if_host_stole_time(s)
    if args.out:
        print(f"results in {Path(args.out).absolute()}", file=sys.stderr)
    return rc


def cmd_compare(args: argparse.Namespace) -> int:
    from rtclab.api import compare_engines
    from rtclab.scenarios import ScenarioNotFound, load_scenario

    try:
        src = load_scenario(args.scenario)
    except ScenarioNotFound as e:
        raise UserError(str(e)) from e
    out = args.out or str(Path("rtclab-out") / f"compare-{Path(args.scenario).stem}")
    with _scenario_command(src.display, "compare"):
        r = compare_engines(args.scenario, seed=args.seed, runs=args.runs, out=out,
                            progress=None if not args.no_progress else False)
    runs = f", mean of {args.runs} runs" if args.runs > 1 else ""
    print(f"{r['sim']['scenario']}: simulator vs emulator (seed {r['sim']['seed']}{runs})")
    print(r["table"])
    outside = r["outside"]
    print(f"{len(outside)} metric(s) outside tolerance" if outside else "every toleranced metric within tolerance")
    print(f"results in {r['out']}")
    if outside and args.strict:
        print(f"error: --strict: {len(outside)} metric(s) outside tolerance: "
              + ", ".join(f"{d['scope']} {d['metric']}" for d in outside), file=sys.stderr)
        return EXIT_OUTSIDE_TOLERANCE
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """Argument handling and printing over `rtclab.run_sweep`."""
    from rtclab.api import run_sweep
    from rtclab.output import OutputError
    from rtclab.sweep import SweepError, load_sweep

    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    try:
        sweep = load_sweep(args.sweep)
        out = args.out or str(Path("rtclab-out") / f"sweep-{sweep.name}")
        res = run_sweep(sweep, out, workers=args.workers, resume=args.resume,
                        progress=None if not args.no_progress else False, report=not args.no_plots,
                        backend=args.backend, address=args.address, force=args.force)
    except (SweepError, OutputError) as e:
        raise UserError(str(e)) from e
    except ConfigError as e:
        raise UserError(f"{args.sweep}: {e}") from e
    print(f"sweep {sweep.name}: {res.runs} runs ({res.already} already in the store, {res.ran} run now) "
          f"in {res.wall_s:.1f} s")
    print(f"results in {res.out} (catalog.parquet, catalog_flows.parquet, runs/"
          f"{', report.html' if not args.no_plots else ''})")
    return 0


def cmd_suite(args: argparse.Namespace) -> int:
    """Argument handling and printing over `rtclab.run_suite`."""
    from rtclab.api import run_suite
    from rtclab.output import OutputError
    from rtclab.suites import SuiteError, default_ccs, expected, format_rows

    ccs = args.cc or default_ccs(args.suite)
    if args.workers is not None and args.workers < 1:
        raise UserError("--workers must be at least 1")
    out = args.out or f"rtclab-out/suite-{args.suite}"
    try:
        rows = run_suite(args.suite, ccs, seeds=args.seeds, out=out, workers=args.workers,
                         resume=args.resume, progress=None if not args.no_progress else False, force=args.force)
    except (SuiteError, OutputError) as e:
        raise UserError(str(e)) from e
    print(format_rows(rows, args.suite))
    for key, figure in expected(args.suite).items():
        print(f"expected {key}: {figure}")
    notes = json.loads((Path(out) / "suite.json").read_text(encoding="utf-8"))["not_run"]
    for n in notes:
        print(f"not run: {n['case']}: {n['why']}")
    print(f"results in {out} (suite.json, report.html, runs/)")
    return 0


def cmd_realclient(args: argparse.Namespace) -> int:
    from rtclab import realclient

    from rtclab.output import OutputError

    try:
        rows = realclient.compare(args.client, args.scenario, runs=args.runs, out=args.out,
                                  progress=not args.no_progress, capture=args.capture)
    except (ValueError, RuntimeError, OutputError) as e:
        raise UserError(str(e)) from e
    print(realclient.table(rows))
    if args.out:
        print(f"results in {args.out} (realclient.json, table.md, targets.png, scenario.toml, runN-sender.csv, runN-link.csv, runN-offer.json"
              + (", runN-sent.pcap)" if args.capture else ")"))
    return 0


def _real_client_args(p: argparse.ArgumentParser, scenario: str, files: str, runs: int | None = 3) -> None:
    """The client, scenario and --runs arguments `realclient` and `calibrate` share."""
    # (named here: rtclab.realclient loads numpy, which every command's start would then pay)
    p.add_argument("client", choices=["aiortc", "pion", "chromium"], help="which real stack")
    p.add_argument("scenario", nargs="?", default=scenario,
                   help=f"{files}, or a built-in: step, dip, wifi, wifi1, 4g, fhmn2013-1m, fhmn2013-2m, vp8-floor "
                        "(default: %(default)s)")
    p.add_argument("--runs", type=int, default=runs, help="emulator runs of the real client (default: 3)")


def cmd_calibrate(args: argparse.Namespace) -> int:
    from rtclab import calibrate
    from rtclab.output import OutputError

    out = args.out or str(Path("rtclab-out") / f"calibrate-{args.client}-{Path(args.scenario).stem}")
    if args.runs is not None and (args.from_dir or args.recorded):
        raise UserError("--runs is for runs made now; --from and --recorded judge the runs already recorded there")
    try:
        twin = calibrate.parse_twin_settings(args.twin or [])
        result = calibrate.calibrate(args.client, args.scenario, runs=args.runs or 3, out=out, progress=not args.no_progress,
                                     from_dir=args.from_dir, recorded=args.recorded, twin=twin, scale=args.scale,
                                     duration_s=args.duration, buffer=args.buffer)
    except (ValueError, RuntimeError, OutputError) as e:
        raise UserError(str(e)) from e
    if args.json:
        print(json.dumps(calibrate._jsonable({k: v for k, v in result.items() if k != "per_second"}), indent=1))
    else:
        print(calibrate.report(result))
        print(f"results in {out} (agreement.md, calibrate.png, per_second.csv, calibrate.json, twin.json, "
              "scenario.toml, runN-sender.csv, runN-link.csv, runN-receiver.csv where the client logs one)")
    return 0


def cmd_classify(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rtclab.classify import CLASSES, CaptureError, classify_capture, sdp_payload_types

    pts = None
    if args.sdp:
        from rtclab.inputs import InputFileError, read_input_text

        try:
            pts = sdp_payload_types(read_input_text(args.sdp, "sdp"))
        except InputFileError as e:
            raise UserError(str(e)) from e
    try:
        r = classify_capture(args.pcap, pts)
    except OSError as e:
        raise UserError(f"{args.pcap}: {e.strerror or e}") from e
    except CaptureError as e:
        raise UserError(str(e)) from e
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{r['packets']} RTP packets in {r['streams']} stream(s)")
    rows = [[c, r["counts"].get(c, 0), f"{r['composition'][c]:.3f}"] for c in CLASSES]
    if r["scores"]:
        for row, c in zip(rows, CLASSES):
            sc = r["scores"][c]
            row += ["n/a" if sc["precision"] is None else f"{sc['precision']:.3f}",
                    "n/a" if sc["recall"] is None else f"{sc['recall']:.3f}", sc["packets"]]
    headers = ["class", "packets", "bytes share"] + (["precision", "recall", "true packets"] if r["scores"] else [])
    print(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True))
    if r["scores"]:
        print(f"scored against rtclab's own labels ({r['labelled']} packets)")
    return 0


def cmd_repro(args: argparse.Namespace) -> int:
    """Argument handling and printing over `rtclab.repro.reproduce_paper`, which `rtclab.reproduce`
    also calls: the request is checked there once, for both."""
    from rtclab.output import OutputError
    from rtclab.repro import MISSED, NOT_MEASURED, format_table, is_open, reproduce_paper, tally_line, write_outputs

    out = args.out or f"rtclab-out/repro-{args.paper}"
    try:
        _check_out(out)
        outcome = reproduce_paper(args.paper, runs=args.runs, jobs=args.jobs, only=args.only, store=args.store,
                                  progress=None if not args.no_progress else False)
    except (ValueError, OutputError) as e:
        raise UserError(str(e)) from e
    repro = outcome.repro
    print(f"{repro.title}: {len(repro.jobs)} runs in {outcome.wall:.1f} s")
    print(format_table(outcome.rows))
    for n in repro.notes:
        print(f"note: {n}")
    open_rows = [r for r in outcome.rows if r.verdict in (MISSED, NOT_MEASURED) and is_open(r.cause)]
    for r in open_rows[:10]:
        print(f"open: {r.experiment} / {r.variant} / {r.metric}" + (f" ({r.cause[6:]})" if r.cause != "open" else ""))
    if len(open_rows) > 10:
        print(f"open: ... and {len(open_rows) - 10} more (repro.json: \"cause\": \"open\")")
    print(tally_line(outcome.rows))
    try:
        path = write_outputs(repro, outcome.rows, outcome.results, out, outcome.wall)
    except OutputError as e:
        raise UserError(str(e)) from e
    print(f"results in {path}")
    return 0


def cmd_metis(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from rtclab.api import metis_auto, metis_convert, metis_deploy, metis_design, metis_rtc
    from rtclab.metis.browser import BrowserMissing, PageFailed
    from rtclab.metis.options import AutoOptions, ConvertOptions, DeployOptions, DesignOptions, RtcOptions
    from rtclab.metis.webassets import AssetsMissing
    from rtclab.output import OutputError

    options, fn, show = {"rtc": (RtcOptions, metis_rtc, _print_metis_rtc),
                         "convert": (ConvertOptions, metis_convert, _print_metis),
                         "design": (DesignOptions, metis_design, _print_metis_design),
                         "auto": (AutoOptions, metis_auto, _print_metis_auto),
                         "deploy": (DeployOptions, metis_deploy, _print_metis_deploy)}[args.action]
    given = {f.name: getattr(args, f.name) for f in fields(options)}
    try:
        s = fn(args.out, **given)
    except (ValueError, DataMissing, OutputError, BrowserMissing, AssetsMissing, PageFailed) as e:
        raise UserError(str(e)) from e
    except ImportError as e:
        raise _learn_missing(e) from e
    show(s)
    return 0


def _learn_missing(e: ImportError) -> UserError:
    return UserError(f"this command needs the `learn` extra ({e.name or e} is not installed): "
                     f"pip install 'rtclab[learn]' (jax, optax, networkx, lime)")


def _load_range(text: str) -> tuple[float, float]:
    lo, sep, hi = text.partition(",")
    try:
        a = float(lo)
        b = float(hi) if sep else a
    except ValueError:
        raise UserError(f"--load {text!r}: expected LO,HI (e.g. 0.3,0.9) or one number") from None
    return a, b


def cmd_metis_dataset(args: argparse.Namespace) -> int:
    from rtclab.api import metis_dataset
    from rtclab.metis.netdata import DatasetError, read_samples

    try:
        t0 = time.perf_counter()
        out = metis_dataset(args.out, [t.strip() for t in args.topology.split(",") if t.strip()], args.samples, args.k,
                            _load_range(args.load), args.duration, args.seed, workers=args.workers, resume=args.resume)
        n = len(read_samples(out))
    except ImportError as e:
        raise _learn_missing(e) from e
    except (ValueError, DatasetError, OSError) as e:
        raise UserError(str(e)) from e
    print(f"{n} samples in {out} ({time.perf_counter() - t0:.0f} s): dataset.json, samples.jsonl")
    return 0


def cmd_metis_routenet(args: argparse.Namespace) -> int:
    from rtclab.api import metis_routenet
    from rtclab.metis.netdata import DatasetError
    from rtclab.output import OutputError

    try:
        s = metis_routenet(args.test, args.out, train=args.train, model=args.model, epochs=args.epochs, seed=args.seed,
                           batch_size=args.batch_size, verbose=not args.quiet)
    except ImportError as e:
        raise _learn_missing(e) from e
    except (ValueError, DatasetError, OutputError) as e:
        raise UserError(str(e)) from e
    print("relative error of the predicted mean delay per path (held out = a topology not trained on):")
    for name, r in s["relative_error"].items():
        print(f"  {name:12s} {r['samples']:4d} samples, {r['paths']:6d} paths: median {r['median']:.1%}, "
              f"p90 {r['p90']:.1%}, mean {r['mean']:.1%}{'  (held out)' if r['held_out_topology'] else ''}")
    print(f"results in {s['out']}  (model.npz, routenet.json, errors.png)")
    return 0


def cmd_metis_explain(args: argparse.Namespace) -> int:
    from rtclab.api import metis_explain
    from rtclab.output import OutputError

    try:
        s = metis_explain(args.model, args.out, topo_name=args.topology, k=args.k, routing_seed=args.routing_seed,
                          traffic_seed=args.traffic_seed, load=_load_range(args.load), seeds=args.seeds,
                          steps=args.steps, top=args.top, duration_s=args.duration, verbose=not args.quiet)
    except ImportError as e:
        raise _learn_missing(e) from e
    except (ValueError, OutputError) as e:
        raise UserError(str(e)) from e
    print(f"{s['topology']}: {s['connections']} (link, path) connections, load {s['load']:.2f}; "
          f"mask mean {s['mask']['mean']:.2f}, {s['mask']['share_above_0.5']:.0%} kept above 0.5")
    for k, v in s["loss"].items():
        print(f"  {k}: loss {v['first']:.3f} -> {v['last']:.3f} (fidelity MSE {v['last_fidelity']:.4f})")
    print(f"top {len(s['top'])} connections (mean over seeds):")
    for c in s["top"]:
        print(f"  link {c['link']:8s} in path {'-'.join(map(str, c['path']))}: mask {c['mask']:.3f}")
    print(f"loss change over the last 10 % of steps {s['convergence']:.1%}; kept/dropped decisions changed there "
          f"{s['decision_flips']:.1%} (largest over seeds)")
    print(f"top-{len(s['top'])} overlap between seeds: {s['top_overlap']['mean']:.0%}")
    a = s["adjustment"]
    print(f"adjustment: path {a['pair'][0]}->{a['pair'][1]} (slowest by the model) "
          f"{'-'.join(map(str, a['old_route']))}")
    b = a["before"]
    for name in ("mask", "load"):
        e = a[name]
        if not e["changed"]:
            print(f"  rerouted by {name} weights: the same route")
            continue
        print(f"  rerouted by {name} weights {'-'.join(map(str, e['new_route']))}: path delay "
              f"predicted {b['predicted']['path_ms']:.2f} -> {e['predicted']['path_ms']:.2f} ms, "
              f"simulated {b['simulated']['path_ms']:.2f} -> {e['simulated']['path_ms']:.2f} ms; network mean "
              f"predicted {b['predicted']['mean_ms']:.2f} -> {e['predicted']['mean_ms']:.2f}, simulated "
              f"{b['simulated']['mean_ms']:.2f} -> {e['simulated']['mean_ms']:.2f} ms")
    print(f"results in {s['out']}  (explain.json, connections.csv, mask_loss.png, topology.png)")
    return 0


def _print_metis(s: dict) -> None:
    print(f"converted in {s['conversion_seconds']:.1f} s: {s['leaves']} leaves, depth {s['depth']} "
          f"(iteration {s['selected_iteration'] + 1} of {s['iterations']})")
    print(f"test QoE per chunk on {s['test_traces']} held-out traces: tree {s['test_qoe_tree']:.3f}, "
          f"{s['teacher_name']} ({s['teacher_actions']}) {s['test_qoe_teacher']:.3f} ("
          + (f"tree/teacher {s['tree_vs_teacher']:.1%}" if s["tree_vs_teacher"] is not None
             else f"tree − teacher {s['test_qoe_tree'] - s['test_qoe_teacher']:+.3f}") + f"; {s['qoe']} QoE)")
    print(f"results in {s['out']}  (tree.json, tree.html, tree.svg, conversion.json)")


def _print_metis_auto(s: dict) -> None:
    t = s["training"]
    print(f"AuTO on the {s['workload']} workload at load {s['load']}: sRLA {t['srla_steps']} DDPG decisions "
          f"({t['srla_seconds']:.0f} s), lRLA {t['lrla_episodes']} REINFORCE episodes ({t['lrla_seconds']:.0f} s)")
    c = s["conversion"]
    print(f"Metis: {c['seconds']:.1f} s, lRLA tree {c['lrla_leaves']} leaves (hold-out accuracy "
          f"{c['lrla_holdout_accuracy']:.3f}), sRLA trees {c['srla_leaves']} leaves")
    print(f"FCT of every flow arriving in {s['test']['seeds']} × {s['test']['seconds_each']:g} s of held-out "
          f"arrivals ({next(iter(s['fct'].values()))['flows']} flows, each episode drained):")
    for name, f in s["fct"].items():
        print(f"  {name:10s}mean {f['mean_ms']:7.3f} ms  p99 {f['p99_ms']:8.3f} ms  short p99 "
              f"{f['short_p99_ms'] * 1e3:7.1f} us  slowdown {f['mean_slowdown']:.3f}")
    r = s["tree_vs_dnn"]
    print("tree / DNN FCT: " + "; ".join(f"{label} mean {r[k]['mean']:.3f}, p99 {r[k]['p99']:.3f}" for k, label in
                                         (("", "both agents"), ("-srla", "sRLA alone"), ("-lrla", "lRLA alone"))))
    print("decision latency DNN / tree: lRLA "
          + (f"{s['latency_ratio']['lrla']:.1f}x" if s["latency_ratio"]["lrla"] else "n/a")
          + f", sRLA {s['latency_ratio']['srla']:.1f}x")
    print(f"results in {s['out']}  (auto.json, fct.png, lrla-tree.json, srla-tree-*.json, *.npz)")


def _print_metis_deploy(s: dict) -> None:
    pub = s["published"]
    print(f"deployment case: {s['runs']} loads per page at {s['rate_kbps']:g} kbit/s, {s['rtt_ms']:g} ms, "
          f"{s['seconds']:g} s of playback each (tree: {s['tree_leaves']} leaves; "
          + ", ".join(s["assets"].values()) + ")")
    print(f"  {'page':10s}{'size (KB)':>11s}{'load (s)':>10s}{'heap mean (MB)':>16s}{'heap peak (MB)':>16s}"
          f"{'heap at ready':>15s}{'decision (us)':>15s}{'chunks':>8s}")
    for page, p in s["pages"].items():
        dec = f"{p['decision_us']:15.1f}" if p["decision_us"] is not None else f"{'-':>15s}"
        ready = f"{p['heap_ready_mb']:15.3f}" if p["heap_ready_mb"] is not None else f"{'-':>15s}"
        print(f"  {page:10s}{p['page_bytes'] / 1000:11.1f}{p['ready_ms'] / 1000:10.2f}{p['heap_mean_mb']:16.2f}"
              f"{p['heap_peak_mb']:16.2f}{ready}{dec}{p['chunks']:8.0f}")
    a, r = s["added"], s["ratios"]

    def x(key):
        v = r[key]
        return "n/a" if v is None else (">= " if s["bounds"].get(key) else "") + f"{v:.1f}x"

    print(f"  added over fixed: Pensieve {a['pensieve']['page_kb']:.0f} KB (paper {pub['pensieve_page_kb']:.0f}), "
          f"{a['pensieve']['load_s']:.2f} s load (paper {pub['pensieve_load_s']}); tree {a['tree']['page_kb']:.1f} KB, "
          f"{a['tree']['load_s'] * 1000:.0f} ms (paper {pub['tree_load_s'] * 1000:.0f})")
    print(f"  Pensieve / tree: load added {x('load')} (paper {pub['load_ratio']:.0f}x), extra heap mean "
          f"{x('heap_mean')} (paper {pub['heap_mean_ratio']}x), peak {x('heap_peak')} (paper "
          f"{pub['heap_peak_ratio']}x), at ready {x('heap_ready')}, decision {x('decision')}")
    if any(s["bounds"].values()):
        print("  (>=: the tree adds no more than the fixed page's own spread over the loads; Pensieve / spread)")
    print(f"results in {s['out']}  (deploy.json, deploy.png, tree.json, site/)")


def _print_metis_design(s: dict) -> None:
    print(f"A3C, {s['agents']} agents, {s['iterations']} iterations, seeds {', '.join(map(str, s['seeds']))}: "
          f"{s['seconds']:.0f} s")
    ratio = s["modified_vs_original"]
    print(f"final test QoE (last 10 % of evaluations, {s['test_traces']} held-out traces): original "
          f"{s['original_final_qoe']:.3f}, modified {s['modified_final_qoe']:.3f}"
          + (f" ({ratio - 1:+.1%})" if ratio is not None else ""))
    for p in s["per_seed"]:
        saved = p["iterations_saved"]
        print(f"  seed {p['seed']}: original reaches its final level at iteration "
              f"{p['original_reaches_its_final_level_at']}, modified at {p['modified_reaches_it_at']}"
              + (f" ({saved:+d} iterations)" if saved is not None else ""))
    print(f"results in {s['out']}  (curves.csv, design.json, design.png, actor-*.npz)")


def _print_metis_rtc(s: dict) -> None:
    last = s["training"][-1]
    print(f"teacher: {last['samples']} labelled steps, {len(s['training'])} DAgger rounds, {last['seconds']:.0f} s")
    if s["rl_finetuning"]:
        c = s["rl_finetuning"][-1]
        print(f"RL fine-tuning (ES, {len(s['rl_finetuning']) - 1} generations): training-call score "
              f"{c['check_before']:.1f} -> {c['check_after']:.1f} ({'kept' if c['kept'] else 'not kept'})")
    print(f"tree: {s['tree_leaves']} leaves, depth {s['tree_depth']}, converted in {s['conversion_seconds']:.1f} s")
    print(f"held-out mean over {len(s['test_scenarios'])} calls (challenge network score / p95 frame delay ms / freeze s):")
    for k, m in s["means"].items():
        print(f"  {k:10s} {m['network_score']:6.1f}  {m['frame_delay_ms_p95']:8.0f}  {m['freeze_s']:6.2f}"
              f"  (throughput {m['throughput_mbps']:.2f} Mbit/s, owd p95 {m['owd_p95_ms']:.0f} ms)")
    print(f"results in {s['out']}  (teacher_mlp.npz, tree.json, tree.html, rtc.json)")


def cmd_hairpin(args: argparse.Namespace) -> int:
    from rtclab import hairpin
    from rtclab.api import hairpin_table
    from rtclab.output import OutputError

    if not (args.lambda_ > 0 and args.lambda_ < float("inf")):
        raise UserError(f"--lambda must be a finite number > 0, got {args.lambda_}")
    if args.action == "cell":
        table, _ = hairpin.solve(args.lambda_)
        try:
            k = _core.hairpin_cell(table, args.loss, args.frame, args.layers, args.packets)
        except ValueError as e:
            raise UserError(str(e)) from e
        print(f"λ {args.lambda_:g}, loss {args.loss:g}, frame {args.frame} packets, {args.layers} opportunities, "
              f"{args.packets} packets outstanding: {k} parity packets (β = {k / args.packets:.2f})")
        return 0
    try:
        info = hairpin_table(args.lambda_, args.out, args.compare)
    except (ValueError, OutputError) as e:
        raise UserError(str(e)) from e
    print(f"solved {info['cells']} cells for λ = {args.lambda_:g} in {info['solve_seconds']:.2f} s")
    if "golden_vectors" in info:
        g = info["golden_vectors"]
        print(f"spec §3.11 golden vectors: {g['matching']} of {g['checked']} match")
    if "published" in info:
        c = info["published"]
        print(f"against {c['file']}: {c['matching']} of {c['cells']} cells match")
        for d in c["first"]:
            print(f"  differs: {d}")
    else:
        print(f"no published table for λ = {args.lambda_:g} (the authors published 1e-4 and 1e-7; "
              "give --compare FILE for another)")
    print(f"results in {info['out']}")
    return 0


def cmd_data(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from rtclab import datasets

    if args.action == "list":
        rows = datasets.summary_rows()
        print(tabulate([[r["set"], r["files"], f"{r['bytes'] / 1e6:.1f} MB", r["licence"], r["source"], r["commit"],
                         r["read from"], r["used by"]] for r in rows],
                       headers=["set", "files", "size", "licence", "source", "commit", "read from", "used by"],
                       tablefmt="simple", disable_numparse=True))
        print(f"shipped in {datasets.DATA_ROOT} (README.md: provenance; licenses/: licence texts)")
        return 0
    problems = datasets.verify()
    n = len(datasets.files())
    for pr in problems:
        print(f"{pr.path}: {pr.what}")
    if problems:
        print(f"error: {len(problems)} problem(s) in {datasets.DATA_ROOT} against its manifest ({n} files); "
              "reinstall rtclab (in a clone: `git checkout -- python/rtclab/data`)", file=sys.stderr)
        return 1
    print(f"all {n} files match the manifest (size and SHA-256) in {datasets.DATA_ROOT}")
    return 0


def _memory_arg(text: str) -> int:
    from rtclab.runner import parse_memory

    try:
        return parse_memory(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _metis_defaults():
    from rtclab.metis.options import AutoOptions, ConvertOptions, DeployOptions, DesignOptions, RtcOptions

    return ConvertOptions(), RtcOptions(), DesignOptions(), AutoOptions(), DeployOptions()


def build_parser() -> argparse.ArgumentParser:
    _CONVERT, _RTC, _DESIGN, _AUTO, _DEPLOY = _metis_defaults()
    p = argparse.ArgumentParser(prog="rtclab", description="Real-time media transport lab.")
    p.add_argument("--version", action="version", version=f"rtclab {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    r = sub.add_parser("run", help="run a scenario in the simulator or the emulator")
    r.add_argument("scenario", nargs="?", default="default", help="scenario file or built-in name (default: %(default)s)")
    r.add_argument("--out", help="output directory (default: rtclab-out/<scenario>)")
    r.add_argument("--seed", type=int, help="root random seed (default: the scenario's, else 1)")
    r.add_argument("--no-plots", action="store_true", help="skip PNG plots and the HTML report")
    r.add_argument("--timings", action="store_true",
                   help="print where the process spent its time (start-up, simulation, results, files, plots) to stderr")
    r.add_argument("--force", action="store_true",
                   help="run even if the estimated cost is beyond the limits (see `rtclab validate`)")
    r.add_argument("--no-progress", action="store_true", help="never draw the progress bar")
    r.add_argument("--max-memory", metavar="SIZE", type=_memory_arg,
                   help="stop the run (nothing written) if its memory grows past SIZE, e.g. 4GiB "
                        "(default: $RTCLAB_MAX_MEMORY, else 75%% of physical memory)")
    r.add_argument("--engine", choices=["sim", "emu"], default="sim",
                   help="sim: the deterministic simulator; emu: real packets through TUN devices in "
                        "network namespaces, kernel TCP (needs root) (default: %(default)s)")
    r.add_argument("--capture", action="store_true",
                   help="emu: write DIR/bottleneck.pcap (both directions, raw IP, ns timestamps)")
    r.add_argument("--snaplen", type=int, default=0, help="emu capture: bytes per packet, 0 = whole (default)")
    r.add_argument("--capture-at", choices=["delivered", "sent"], default="delivered",
                   help="emu capture: packets as the link delivered them, or as the hosts sent them "
                        "(before loss and queue drops; what `rtclab classify` needs) (default: %(default)s)")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("compare", help="run a scenario in the simulator and the emulator and compare")
    c.add_argument("scenario", help="scenario file or built-in name")
    c.add_argument("--out", help="output directory (default: rtclab-out/compare-<scenario>)")
    c.add_argument("--seed", type=int, help="root random seed (default: the scenario's, else 1)")
    c.add_argument("--runs", type=int, default=1, help="runs per engine (seeds seed, seed+1, ...); metrics are averaged (default: %(default)s)")
    c.add_argument("--no-progress", action="store_true", help="never draw the progress bar")
    c.add_argument("--strict", action="store_true",
                   help="exit with status 1 when any toleranced metric is outside its tolerance (results are "
                        "written either way; default: exit 0, the verdict is in the output)")
    c.set_defaults(func=cmd_compare)

    emu = sub.add_parser("emu", help="emulator tools")
    emu_sub = emu.add_subparsers(dest="emu_command", metavar="TOOL")
    sh = emu_sub.add_parser("shell", help="run your own programs through a scenario's emulated link")
    sh.add_argument("scenario", help="scenario file or built-in name (its link and delays are used)")
    sh.add_argument("--receiver", metavar="CMD", help="shell command to run in the receiver namespace (a server)")
    sh.add_argument("--seed", type=int, help="root random seed (loss, jitter)")
    sh.add_argument("--out", help="write the network's result folder here, as `rtclab run` does")
    sh.add_argument("--capture", action="store_true", help="with --out: write DIR/bottleneck.pcap")
    sh.add_argument("--capture-at", choices=["delivered", "sent"], default="delivered",
                    help="the capture's packets as delivered or as the programs sent them (for `rtclab classify`)")
    sh.add_argument("--no-plots", action="store_true", help="with --out: skip PNG plots and the HTML report")
    sh.add_argument("--tcp-cc", metavar="NAME",
                    help="kernel TCP congestion controller for your programs in both namespaces (default: the "
                         "host's, `sysctl net.ipv4.tcp_congestion_control`; the scenario's flows' cc does not apply)")
    sh.epilog = "Everything after `--` is the command to run in the sender namespace (default: $SHELL)."
    sh.set_defaults(func=cmd_emu_shell)

    ls = sub.add_parser("list", help="list built-in scenarios")
    ls.set_defaults(func=cmd_list)

    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    v.set_defaults(func=cmd_validate)

    sw = sub.add_parser("sweep", help="run a scenario over axes and seeds on every core, into a resumable store")
    sw.add_argument("sweep", help="sweep file (docs/sweeps.md)")
    sw.add_argument("--out", help="the store (default: rtclab-out/sweep-<name>)")
    sw.add_argument("--workers", type=int, help="processes (default: every core)")
    sw.add_argument("--resume", action="store_true", help="continue a sweep in --out: run only what is missing")
    sw.add_argument("--backend", choices=["local", "ray"], default="local",
                    help="local: a process pool on this machine; ray: Ray tasks (default: %(default)s)")
    sw.add_argument("--address", help="ray: the cluster's head (host:port); default: a Ray instance on this machine")
    sw.add_argument("--no-progress", action="store_true", help="never draw the progress bar")
    sw.add_argument("--no-plots", action="store_true", help="skip the aggregated report")
    sw.add_argument("--force", action="store_true",
                    help="run even a sweep of more than 10,000 runs (refused otherwise, with its estimated cost)")
    sw.set_defaults(func=cmd_sweep)

    su = sub.add_parser("suite", help="run a standard test suite (RFC 8867, RFC 8869, L4S) for one or more controllers")
    su.add_argument("suite", choices=["rfc8867", "rfc8869", "l4s", "rmcat-l4s"],
                    help="which suite: rfc8867 (wired cases), rfc8869 (Wi-Fi and cellular cases), l4s (scalable vs "
                         "classic flows through DualPI2), rmcat-l4s (the RMCAT cases through DualPI2, media Not-ECT "
                         "and ECT(1))")
    su.add_argument("--cc", action="append",
                    help="controller to test (repeat to compare; default: gcc, for l4s the scalable prague, for "
                         "rmcat-l4s gcc, nada and scream)")
    su.add_argument("--seeds", type=int, default=1, help="runs per case and controller (default: %(default)s)")
    su.add_argument("--out", help="the store (default: rtclab-out/suite-<suite>)")
    su.add_argument("--workers", type=int, help="processes (default: every core)")
    su.add_argument("--resume", action="store_true", help="continue a suite in --out: run only what is missing")
    su.add_argument("--no-progress", action="store_true", help="never draw the progress bar")
    su.add_argument("--force", action="store_true",
                    help="run even a suite of more than 10,000 runs (refused otherwise, with its estimated cost)")
    su.set_defaults(func=cmd_suite)

    cl = sub.add_parser("classify", help="traffic composition of a capture: media, FEC, retransmission, "
                                         "padding (the fairness study's classifier)")
    cl.add_argument("pcap", help="a libpcap file of RTP over UDP, taken where the packets are sent")
    cl.add_argument("--json", action="store_true", help="print the result as JSON")
    cl.add_argument("--sdp", help="the session's SDP (offer or answer): its rtx and FEC payload types are labelled so")
    cl.set_defaults(func=cmd_classify)

    rc = sub.add_parser("realclient", help="a real WebRTC stack (aiortc, pion or Chromium) through the emulator, next to "
                                           "gcc_paper and gcc in the simulator (needs root; aiortc: `pip install aiortc`; "
                                           "pion: go; chromium: Debian's chromium and chromium-driver)")
    _real_client_args(rc, "step", "a scenario file with one media flow")
    rc.add_argument("--out", help="write realclient.json, table.md and the scenario here")
    rc.add_argument("--capture", action="store_true",
                    help="capture each run's sent packets and report their composition (media, rtx, fec, padding)")
    rc.add_argument("--no-progress", action="store_true", help="no progress lines")
    rc.set_defaults(func=cmd_realclient)

    ca = sub.add_parser("calibrate", help="the simulator's twin of a real WebRTC sender (Chromium, pion, aiortc) judged "
                                          "per second against the real one on the same link (needs root and the client, "
                                          "or --recorded / --from)")
    _real_client_args(ca, "dip", "a scenario file (.toml, one media flow), a capacity trace file (bandwidth or mahimahi)",
                      runs=None)
    ca.add_argument("--out", help="output directory (default: rtclab-out/calibrate-<client>-<scenario>)")
    ca.add_argument("--from", dest="from_dir", metavar="DIR",
                    help="judge the real runs recorded in DIR (an earlier calibrate or realclient --out) instead of running the client")
    ca.add_argument("--recorded", nargs="?", const=True, default=False, metavar="NAME",
                    help="judge the runs recorded with rtclab instead (Chromium on step, dip, wifi, wifi1, 4g; NAME picks "
                         "another recording of the scenario, e.g. dip-adjuster-off): no root, no client")
    ca.add_argument("--twin", action="append", metavar="KEY=VALUE",
                    help="a setting of the twin's flow, as in a scenario, e.g. media.bitrate_adjuster=false (repeatable)")
    ca.add_argument("--scale", type=float, default=1.0, help="a bandwidth trace's rates times this (default: %(default)s)")
    ca.add_argument("--duration", type=float, default=60.0, help="seconds, for a trace file (default: %(default)s)")
    ca.add_argument("--buffer", default="300ms", help="the bottleneck queue's limit, for a trace file (default: %(default)s)")
    ca.add_argument("--json", action="store_true", help="print the statistics as JSON")
    ca.add_argument("--no-progress", action="store_true", help="no progress lines")
    ca.set_defaults(func=cmd_calibrate)

    rp = sub.add_parser("repro", help="reproduce a paper's experiments (ours vs published)")
    rp.add_argument("paper", choices=["gcc", "copa", "qlibra", "fairness", "zhuge", "confucius", "hairpin", "afr", "metis"],
                    help="which paper")
    rp.add_argument("--out", help="output directory (default: rtclab-out/repro-<paper>)")
    rp.add_argument("--runs", type=int, default=10,
                    help="gcc: runs per grid cell; copa: 5x this many random coexistence networks; "
                         "qlibra: seeds per phase, at most 3; fairness: runs per condition, at most 10; zhuge: drop instants per k (at most 10) and traces per set; "
                         "hairpin: seeds per set-up, at most 3; afr: 4x this many sessions per category, at most 40; "
                         "metis: 3x this many DAgger iterations per conversion, at most 100 (default: %(default)s)")
    rp.add_argument("--jobs", type=int, default=None, help="parallel runs (default: all cores)")
    rp.add_argument("--only", metavar="EXP[,EXP...]",
                    help="run only these experiments (zhuge: S1, S2, S3, S4, S5; default: all)")
    rp.add_argument("--no-progress", action="store_true", help="never draw the progress bar")
    rp.add_argument("--store", metavar="DIR",
                    help="keep every run in this store (as `rtclab sweep` does): a process pool, resumable after a "
                         "crash, runs already there are not run again")
    rp.set_defaults(func=cmd_repro)

    hp = sub.add_parser("hairpin", help="Hairpin's FEC table: solve it, compare it, look up a cell")
    hp_sub = hp.add_subparsers(dest="action", metavar="ACTION", required=True)
    ht = hp_sub.add_parser("table", help="solve the whole table and compare it with the published one")
    ht.add_argument("--lambda", dest="lambda_", type=float, default=1e-4,
                    help="weight of the bandwidth cost (default: %(default)g, the dissertation's; 1e-7: the released scripts')")
    ht.add_argument("--compare", metavar="FILE", help="a published beta-array-*.bin (default: the authors' table shipped with "
                                                  "rtclab for lambda 1e-4 and 1e-7)")
    ht.add_argument("--out", help="output directory (default: rtclab-out/hairpin-table-<lambda>)")
    ht.set_defaults(func=cmd_hairpin)
    hc = hp_sub.add_parser("cell", help="the parity count for one situation")
    hc.add_argument("--lambda", dest="lambda_", type=float, default=1e-4, help="weight of the bandwidth cost (default: %(default)g)")
    hc.add_argument("--loss", type=float, required=True, help="loss rate, 0 to 0.5 in steps of 0.01")
    hc.add_argument("--frame", type=int, required=True, help="frame size in packets, 5 to 55 in steps of 5")
    hc.add_argument("--layers", type=int, required=True, help="transmission opportunities left, 1 to 15")
    hc.add_argument("--packets", type=int, required=True, help="data packets outstanding, 1 to 55")
    hc.set_defaults(func=cmd_hairpin)

    mp = sub.add_parser("metis", help="Metis: convert a learned policy into a decision tree; retrain Pensieve with "
                                      "the design case's change; train AuTO's agents and convert them; interpret a global "
                                      "system (RouteNet) by its hypergraph")
    mp_sub = mp.add_subparsers(dest="action", metavar="ACTION", required=True)
    mc = mp_sub.add_parser("convert", help="Pensieve's released actor (or RobustMPC) -> tree.json (+ SVG/HTML view)")
    mc.add_argument("--teacher", choices=["pensieve", "robustmpc"], default=_CONVERT.teacher,
                    help="the policy to convert: Pensieve's released actor or RobustMPC (default: %(default)s)")
    mc.add_argument("--qoe", choices=["lin", "log", "hd"], default=_CONVERT.qoe,
                    help="QoE metric of the rewards, the pruning and the scores; RobustMPC optimises it "
                         "(default: %(default)s)")
    mc.add_argument("--traces", metavar="DIR", help="trace folder in <seconds> <Mbit/s> format (default: the Norway set "
                                                    "shipped with rtclab); every 5th trace is held out for testing")
    mc.add_argument("--iterations", type=int, default=_CONVERT.iterations, help="DAgger iterations (default: %(default)s)")
    mc.add_argument("--videos", type=int, default=_CONVERT.videos, help="rollouts per iteration (default: %(default)s)")
    mc.add_argument("--max-leaves", type=int, default=_CONVERT.max_leaves, help="leaf budget for pruning (default: %(default)s)")
    mc.add_argument("--resample", choices=["uniform", "gap", "critic"], default=_CONVERT.resample,
                    help="uniform (released default), gap (max-min action probability) or critic (Eq. 5.1)")
    mc.add_argument("--no-reward-aware", action="store_true",
                    help="prune by hold-out accuracy and keep majority labels instead of one-step rewards")
    mc.add_argument("--holdout", choices=["resample", "distinct"], default=_CONVERT.holdout,
                    help="pruning hold-out: 20 %% of the resampled points (released; copies of a state can fall on both "
                         "sides) or 20 %% of the distinct states (default: %(default)s)")
    mc.add_argument("--oversample", metavar="A=F,...", help="multiply the sampling weight of teacher action A by F "
                                                            "(the debug case: 2=10,4=50)")
    mc.add_argument("--greedy-teacher", action="store_true", help="label with the most probable action (default: sampled)")
    mc.add_argument("--seed", type=int, default=_CONVERT.seed)
    mc.add_argument("--quiet", action="store_true", help="no per-iteration lines")
    mc.add_argument("--out", help="output directory (default: rtclab-out/metis-pensieve)")
    mc.set_defaults(func=cmd_metis)
    mr = mp_sub.add_parser("rtc", help="train a DNN imitating GCC on rtclab/BandwidthEstimation-v0, convert it to a "
                                       "tree (cc = \"tree\"), compare with gcc and gcc_paper on held-out calls")
    mr.add_argument("--train", type=int, default=_RTC.train, help="training scenarios (default: %(default)s)")
    mr.add_argument("--test", type=int, default=_RTC.test, help="held-out scenarios (default: %(default)s)")
    mr.add_argument("--rounds", type=int, default=_RTC.rounds, help="DAgger rounds after behaviour cloning (default: %(default)s)")
    mr.add_argument("--max-seconds", type=float, default=_RTC.max_seconds, help="stop adding DAgger rounds after this long")
    mr.add_argument("--es-generations", type=int, default=_RTC.es_generations,
                    help="RL fine-tuning of the DNN by evolution strategies, generations (0: imitation only; default: %(default)s)")
    mr.add_argument("--iterations", type=int, default=_RTC.iterations, help="Metis DAgger iterations for the tree (default: %(default)s)")
    mr.add_argument("--max-leaves", type=int, default=_RTC.max_leaves, help="leaf budget (default: %(default)s)")
    mr.add_argument("--seed", type=int, default=_RTC.seed)
    mr.add_argument("--out", help="output directory (default: rtclab-out/metis-rtc)")
    mr.set_defaults(func=cmd_metis)
    mg = mp_sub.add_parser("design", help="the design case: train Pensieve (A3C as released) with and without the last "
                                          "bitrate at the output layer, from the same seeds; test QoE vs iterations")
    mg.add_argument("--iterations", type=int, default=_DESIGN.iterations,
                    help="A3C iterations per network (the paper: 800000; default: %(default)s)")
    mg.add_argument("--seeds", default=_DESIGN.seeds, help="comma-separated seeds, each trains both networks "
                                                           "(default: %(default)s)")
    mg.add_argument("--eval-every", type=int, default=_DESIGN.eval_every,
                    help="test the actor every this many iterations (default: %(default)s)")
    mg.add_argument("--agents", type=int, default=_DESIGN.agents, help="parallel agents (default: %(default)s)")
    mg.add_argument("--traces", metavar="DIR", help="trace folder (default: the Norway set shipped with rtclab); "
                                                    "every 5th trace is held out for testing")
    mg.add_argument("--quiet", action="store_true", help="no progress lines")
    mg.add_argument("--out", help="output directory (default: rtclab-out/metis-design)")
    mg.set_defaults(func=cmd_metis)

    ma = mp_sub.add_parser("auto", help="AuTO: train its sRLA (DDPG, MLFQ thresholds) and lRLA (REINFORCE, long-flow "
                                        "priorities) on a datacenter fabric, convert both by Metis, compare FCT")
    ma.add_argument("--workload", default=_AUTO.workload, help="flow sizes: websearch (DCTCP) or datamining (VL2) "
                                                               "(default: %(default)s)")
    ma.add_argument("--load", type=float, default=_AUTO.load, help="offered load, 0-1 (default: %(default)s)")
    ma.add_argument("--srla-steps", type=int, default=_AUTO.srla_steps, help="sRLA decisions trained, in episodes of 20 (default: %(default)s)")
    ma.add_argument("--lrla-episodes", type=int, default=_AUTO.lrla_episodes,
                    help="lRLA training episodes of 2 s each (default: %(default)s)")
    ma.add_argument("--iterations", type=int, default=_AUTO.iterations, help="Metis DAgger iterations (default: %(default)s)")
    ma.add_argument("--episodes", type=int, default=_AUTO.episodes, help="rollouts per DAgger iteration (default: %(default)s)")
    ma.add_argument("--max-leaves", type=int, default=_AUTO.max_leaves, help="leaf budget per tree (default: %(default)s)")
    ma.add_argument("--test-seeds", type=int, default=_AUTO.test_seeds, help="held-out episodes (default: %(default)s)")
    ma.add_argument("--test-seconds", type=float, default=_AUTO.test_seconds,
                    help="fabric time per held-out episode (default: %(default)s)")
    ma.add_argument("--seed", type=int, default=_AUTO.seed)
    ma.add_argument("--quiet", action="store_true", help="no progress lines")
    ma.add_argument("--out", help="output directory (default: rtclab-out/metis-auto)")
    ma.set_defaults(func=cmd_metis)

    mdp = mp_sub.add_parser("deploy", help="the deployment case in a real browser: dash.js with Metis' Pensieve tree vs "
                                           "Pensieve in TensorFlow.js vs a fixed rule, in headless Chromium over a "
                                           "throttled link; page size, page-load time, JS heap, decision time")
    mdp.add_argument("--tree", metavar="FILE", help="the Pensieve tree to deploy (tree.json of `rtclab metis convert`; "
                                                    "default: convert the released actor here)")
    mdp.add_argument("--iterations", type=int, default=_DEPLOY.iterations,
                     help="DAgger iterations of that conversion (default: %(default)s)")
    mdp.add_argument("--runs", type=int, default=_DEPLOY.runs, help="loads of each page (default: %(default)s)")
    mdp.add_argument("--seconds", type=float, default=_DEPLOY.seconds,
                     help="seconds of playback after each page is ready (default: %(default)s)")
    mdp.add_argument("--rate-kbps", type=float, default=_DEPLOY.rate_kbps,
                     help="download rate of the emulated link, 0 for none (default: %(default)s, Pensieve's mean)")
    mdp.add_argument("--rtt-ms", type=float, default=_DEPLOY.rtt_ms, help="latency per request (default: %(default)s)")
    mdp.add_argument("--tfjs", default=_DEPLOY.tfjs, help="TensorFlow.js version: 4.22.0, or 0.14.1 as the Metis page "
                                                       "(default: %(default)s)")
    mdp.add_argument("--chromium", metavar="PATH", help="the Chromium to drive (default: $RTCLAB_CHROMIUM or chromium "
                                                        "on PATH)")
    mdp.add_argument("--seed", type=int, default=_DEPLOY.seed)
    mdp.add_argument("--quiet", action="store_true", help="no progress lines")
    mdp.add_argument("--out", help="output directory (default: rtclab-out/metis-deploy)")
    mdp.set_defaults(func=cmd_metis)

    md = mp_sub.add_parser("dataset", help="a data set of simulator runs for a learned network model: per-path delay "
                                           "of Poisson traffic over a topology, routing and traffic matrix per sample")
    md.add_argument("--topology", default="nsfnet", help="comma-separated: nsfnet, geant2, synthN-SEED (a random "
                                                         "graph of N nodes); samples alternate (default: %(default)s)")
    md.add_argument("--samples", type=int, default=100, help="samples (simulation runs) (default: %(default)s)")
    md.add_argument("--k", type=int, default=3, help="each path is one of its pair's k shortest (default: %(default)s)")
    md.add_argument("--load", default="0.3,0.9", help="busiest link's load, drawn from LO,HI (default: %(default)s)")
    md.add_argument("--duration", type=float, default=10.0, help="simulated seconds per sample (default: %(default)s)")
    md.add_argument("--seed", type=int, default=1)
    md.add_argument("--workers", type=int, help="parallel runs (default: one per core)")
    md.add_argument("--resume", action="store_true", help="complete an interrupted data set in --out")
    md.add_argument("--out", required=True, help="data set folder (new, or the same data set with --resume)")
    md.set_defaults(func=cmd_metis_dataset)
    mn = mp_sub.add_parser("routenet", help="train a RouteNet-style delay model (JAX) on a data set and measure its "
                                            "relative error on another (held-out topologies)")
    mn.add_argument("--train", metavar="DATASET", help="data set to train on")
    mn.add_argument("--model", metavar="FILE", help="evaluate this model.npz instead of training one")
    mn.add_argument("--test", metavar="DATASET", required=True, help="data set to measure the error on")
    mn.add_argument("--epochs", type=int, default=20, help="(default: %(default)s)")
    mn.add_argument("--batch-size", type=int, default=16, help="(default: %(default)s)")
    mn.add_argument("--seed", type=int, default=1)
    mn.add_argument("--quiet", action="store_true", help="no per-epoch lines")
    mn.add_argument("--out", default="rtclab-out/metis-routenet", help="output directory (default: %(default)s)")
    mn.set_defaults(func=cmd_metis_routenet)
    me = mp_sub.add_parser("explain", help="Metis' hypergraph interpretation of a RouteNet model: critical (link, "
                                           "path) connections, link importance, and a reroute checked in the simulator")
    me.add_argument("--model", required=True, metavar="FILE", help="model.npz of `rtclab metis routenet`")
    me.add_argument("--topology", default="nsfnet", help="(default: %(default)s)")
    me.add_argument("--k", type=int, default=1, help="routing from the k shortest paths (default: %(default)s: shortest)")
    me.add_argument("--routing-seed", type=int, default=1)
    me.add_argument("--traffic-seed", type=int, default=1)
    me.add_argument("--load", default="0.7", help="busiest link's load, or LO,HI to draw it (default: %(default)s)")
    me.add_argument("--seeds", type=int, default=3, help="mask fits with different dropout seeds (default: %(default)s)")
    me.add_argument("--steps", type=int, default=2000, help="Adam steps per fit (default: %(default)s, B.5)")
    me.add_argument("--top", type=int, default=5, help="critical connections to report (default: %(default)s)")
    me.add_argument("--duration", type=float, default=20.0, help="simulated seconds per check (default: %(default)s)")
    me.add_argument("--quiet", action="store_true")
    me.add_argument("--out", default="rtclab-out/metis-explain", help="output directory (default: %(default)s)")
    me.set_defaults(func=cmd_metis_explain)

    da = sub.add_parser("data", help="the third-party data shipped with rtclab (models, traces, tables)")
    da.add_argument("action", choices=["list", "verify"],
                    help="list: the sets, their sources and licences; verify: every file against the manifest's "
                         "size and SHA-256 (exit 1 on any difference)")
    da.set_defaults(func=cmd_data)

    b = sub.add_parser("bench", help="benchmarks")
    b.add_argument("engine", choices=["sim", "emu", "process"],
                   help="sim: the simulation loop; emu: emulator throughput and timing; process: whole "
                        "`rtclab run` processes (with and without plots; against ns-3 with --ns3), the loop against "
                        "htsim with --htsim, and a 1,000-flow run's phases")
    b.add_argument("--ns3", metavar="PROGRAM",
                   help="process: the ns-3 benchmark program (bench/ns3/build-optimized.sh builds it; `make bench-ns3` runs both)")
    b.add_argument("--htsim", metavar="PROGRAM",
                   help="process: the htsim dumbbell program (bench/htsim/build.sh builds it): the loop's CPU time per packet against htsim's")
    b.add_argument("--instructions", action="store_true",
                   help="process, with --htsim: also count both loops' instructions per packet under callgrind (needs valgrind)")
    b.add_argument("--out", help="directory for bench.json")
    b.add_argument("--repeat", type=int, default=None,
                   help="runs; the best and the median are reported (default: 5 for sim, 3 for process)")
    b.add_argument("--no-progress", action="store_true", help="no step lines on stderr (shown on a terminal)")
    b.set_defaults(func=cmd_bench)
    return p


def _sigterm_as_interrupt() -> None:
    """SIGTERM ends a run like Ctrl-C: the emulator tears down before the process exits."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return

    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, handler)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings on the console: a scenario's as one `warning:` line each; a library's (e.g.
    matplotlib's) only with RTCLAB_DEBUG=1, so they never clutter a user's terminal."""
    from rtclab.runner import ScenarioWarning

    if issubclass(category, ScenarioWarning):
        print(f"warning: {message}", file=sys.stderr)
    elif os.environ.get("RTCLAB_DEBUG") == "1":
        print(f"warning: {category.__name__}: {message} ({filename}:{lineno})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """The `rtclab` program (`argv` None: the process's own arguments) or one command in this
    process (tests, scripts: `main([...])`)."""
    if argv is not None:
        return _main(argv)
    try:
        return _main(None)
    finally:
        _before_exit()


def _before_exit() -> None:
    """The program ends with this return: the collector's last passes over every object still
    alive while the interpreter tears down (0.02 s of a 1,000-flow `rtclab run`'s ~0.04 s
    teardown) are skipped by moving those objects to the permanent generation. Files are closed
    by then and atexit handlers still run; only reference cycles left for the collector are not
    freed, which the process's end frees anyway."""
    import gc

    gc.freeze()


def _main(argv: list[str] | None) -> int:
    timings.stamp("main")
    _sigterm_as_interrupt()
    import warnings

    warnings.showwarning = _show_warning
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    import shlex

    from rtclab import runner

    runner.COMMAND_LINE = shlex.join(["rtclab", *argv])
    # `rtclab emu shell SCENARIO [options] -- COMMAND...`: the command is everything after `--`.
    trailing: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, trailing = argv[:i], argv[i + 1:]
    args = parser.parse_args(argv)
    if trailing and getattr(args, "func", None) is not cmd_emu_shell:
        parser.error("`--` COMMAND applies to `rtclab emu shell` only")
    args.trailing = trailing
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_BAD_INPUT
    if getattr(args, "seed", None) is not None and not 0 <= args.seed <= MAX_SEED:
        print(f"error: --seed must be a whole number in 0..={MAX_SEED} (got {args.seed})", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        return args.func(args)
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except DataMissing as e:
        # A command that needs a data set it cannot find: exit 2 and say which, never a partial result.
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ConfigError as e:
        # A scenario built by rtclab itself (a reproduction's, a sweep's axis values) that its
        # own checks refused: one line, not a traceback.
        print(f"error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt as e:
        # Interrupted once is enough: a second Ctrl-C or SIGTERM while the interpreter tears down
        # (finalizers of pools and pipes run then) would only print "Exception ignored in ...".
        import signal

        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        # A sweep or suite says what its store kept and how to resume; anything else wrote nothing.
        print(f"\ninterrupted: {getattr(e, 'message', None) or 'nothing was written'}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError as e:
        from rtclab.runner import MemoryLimitExceeded

        why = str(e) if isinstance(e, MemoryLimitExceeded) else "out of memory"
        print(f"\nerror: {why}; nothing was written", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:
        # `rtclab run ... | head`: the reader left; what was written stays written.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
