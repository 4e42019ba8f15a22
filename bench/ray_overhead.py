"""Ray backend overhead vs the local pool (docs/sweeps.md): the same sweep on both, Ray started once.

Usage: python bench/ray_overhead.py SWEEP.toml  (e.g. 200 runs of bench-10-cubic cut to 10 s)
"""
import time, shutil, ray, sys
from rtclab.sweep import run_sweep
sw = sys.argv[1]
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
res = {"local": [], "ray": []}
for i in range(3):
    for b in ("local", "ray"):
        shutil.rmtree(f"/tmp/rtclab-ray-overhead-{b}", ignore_errors=True)
        t = time.perf_counter()
        run_sweep(sw, f"/tmp/rtclab-ray-overhead-{b}", workers=2, progress=False, report=False, backend=b)
        res[b].append(time.perf_counter() - t)
print({k: [round(x, 2) for x in v] for k, v in res.items()})
print("overhead (best vs best):", round(min(res["ray"]) / min(res["local"]) - 1, 3))
