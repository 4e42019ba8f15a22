"""rtclab: build and evaluate real-time media transport.

Quick start::

    import rtclab
    result = rtclab.run("default", seed=1)   # a built-in scenario, a path, TOML text or a dict
    print(result.summary["link"]["utilization"])
    print(result.typed.flows[0].throughput_mbps)   # the same summary, typed (rtclab.Summary)
    result.flows.plot(x="time_s", y="throughput_mbps")
    rtclab.save(result, "results/default")    # what `rtclab run --out` writes
    rtclab.report(result, "report-dir")       # plots and report.html only

Every CLI command has a function: `run_to_folder` (`rtclab run`), `validate`, `compare_engines`,
`reproduce`, `benchmark`, `emu_shell`, `run_sweep` (and `sweep_catalog` to read a sweep's
store), `run_suite`, `hairpin_table`, `metis_convert`, `metis_rtc`, `metis_design`, `metis_auto`, `metis_deploy`,
`classify_capture` (`rtclab classify`: a capture's traffic composition).
Scenario errors raise `ConfigError` with `.path` (e.g. "flows[0].cc"), `.value` (what the
scenario had there) and `.message`.
"""

from rtclab._core import ConfigError, RunTooLarge, __version__
from rtclab.api import (benchmark, compare_engines, emu_shell, hairpin_table, metis_auto, metis_convert, metis_deploy, metis_design,
                        metis_rtc,
                        report, reproduce, run_suite, run_sweep, run_to_folder, save, sweep_catalog)
from rtclab.controllers import register_controller, registered_controllers, unregister_controller
from rtclab.output import OutputError
from rtclab.runner import RunResult, run
from rtclab.scenarios import builtin_scenarios, load_scenario, validate
from rtclab.summary import Summary, summary_schema

def __getattr__(name: str):
    # `rtclab.classify` (the pcap reader and classifier) is imported on first use, not by every
    # command's start-up.
    if name == "classify_capture":
        from rtclab.classify import classify_capture

        return classify_capture
    raise AttributeError(f"module 'rtclab' has no attribute {name!r}")


__all__ = ["ConfigError", "RunTooLarge", "OutputError", "RunResult", "run", "validate", "save", "report",
           "compare_engines", "reproduce", "benchmark", "emu_shell", "classify_capture", "run_sweep", "run_suite", "run_to_folder", "hairpin_table",
           "metis_convert", "metis_rtc", "metis_design", "metis_auto", "metis_deploy",
           "sweep_catalog", "load_scenario", "builtin_scenarios",
           "register_controller", "unregister_controller", "registered_controllers", "Summary", "summary_schema",
           "__version__"]
