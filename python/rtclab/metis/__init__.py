"""Metis: converting learned policies into decision trees (Meng et al., SIGCOMM'20; dissertation
ch. 5; spec `zhuge-metis.md` part B).

- `rtclab.metis.pensieve`: the released Pensieve actor/critic as a teacher, its data.
- `rtclab.metis.tree`: flat trees, JSON, cost-complexity pruning with reward-aware relabelling.
- `rtclab.metis.convert`: the DAgger loop with resampling and successive halving.
- `rtclab.metis.evaluate`: test-set QoE of teachers, baselines and trees.
- `rtclab.metis.view`: an SVG/HTML view of a tree.
"""

from rtclab.metis.tree import Tree, TreeFileError

__all__ = ["Tree", "TreeFileError"]
