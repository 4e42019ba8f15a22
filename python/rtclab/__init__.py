"""rtclab: build and evaluate real-time media transport.

Quick start::

    import rtclab
    result = rtclab.run("default", seed=1)   # a built-in scenario, a path, TOML text or a dict
    print(result.summary["link"]["utilization"])
    result.flows.plot(x="time_s", y="throughput_mbps")
"""

from rtclab._core import ConfigError, __version__
from rtclab.controllers import register_controller, registered_controllers, unregister_controller
from rtclab.runner import RunResult, run
from rtclab.scenarios import builtin_scenarios, load_scenario

__all__ = ["ConfigError", "RunResult", "run", "load_scenario", "builtin_scenarios",
           "register_controller", "unregister_controller", "registered_controllers", "__version__"]
