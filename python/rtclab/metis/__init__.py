"""Metis: converting learned policies into decision trees (Meng et al., SIGCOMM'20; dissertation
ch. 5; spec `zhuge-metis.md` part B).

- `rtclab.metis.pensieve`: the released Pensieve actor/critic as a teacher, its data.
- `rtclab.metis.tree`: flat trees, JSON, cost-complexity pruning with reward-aware relabelling.
- `rtclab.metis.convert`: the DAgger loop with resampling and successive halving.
- `rtclab.metis.evaluate`: test-set QoE of teachers, baselines and trees.
- `rtclab.metis.view`: an SVG/HTML view of a tree.
"""

__all__ = ["Tree", "TreeFileError"]


def __getattr__(name: str):
    # Imported on first use: `rtclab.metis.options` (read by the CLI's parser) must not pull in
    # numpy through the tree module.
    if name in __all__:
        from rtclab.metis import tree

        return getattr(tree, name)
    raise AttributeError(f"module 'rtclab.metis' has no attribute {name!r}")
