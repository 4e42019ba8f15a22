"""Network topologies and routings for the global-system half of Metis (spec `zhuge-metis.md`
B.5): the graphs RouteNet was trained and tested on, random graphs for training variety, and
k-shortest-path routings.

Sources of the graphs (undirected edge lists, node numbering as in the RouteNet datasets of the
Knowledge-Defined Networking group at UPC, the same lists their DRL-GNN environment builds):

- **NSFNet**: 14 nodes, 21 links — the T1 NSFNET backbone as used in RouteNet (Rusek et al.,
  SOSR'19 / IEEE JSAC 2020) and in Metis' released `interpret-routenet` (dataset `nsfnetbw`).
- **GEANT2**: 24 nodes, 37 links — the GÉANT2 pan-European research network, RouteNet's
  held-out test topology (`geant2bw`).

A link of the graph is two directed links (one per direction), as in RouteNet: a path is a
sequence of directed links.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from itertools import islice

NSFNET_EDGES = [
    (0, 1), (0, 2), (0, 3), (1, 2), (1, 7), (2, 5), (3, 8), (3, 4), (4, 5), (4, 6), (5, 12),
    (5, 13), (6, 7), (7, 10), (8, 9), (8, 11), (9, 10), (9, 12), (10, 11), (10, 13), (11, 12),
]

GEANT2_EDGES = [
    (0, 1), (0, 2), (1, 3), (1, 6), (1, 9), (2, 3), (2, 4), (3, 6), (4, 7), (5, 3), (5, 8),
    (6, 9), (6, 8), (7, 11), (7, 8), (8, 11), (8, 20), (8, 17), (8, 18), (8, 12), (9, 10),
    (9, 13), (9, 12), (10, 13), (11, 20), (11, 14), (12, 13), (12, 19), (12, 21), (14, 15),
    (15, 16), (16, 17), (17, 18), (18, 21), (19, 23), (21, 22), (22, 23),
]

#: Built-in topologies by name: (nodes, undirected edges).
BUILT_IN = {"nsfnet": (14, NSFNET_EDGES), "geant2": (24, GEANT2_EDGES)}


class TopologyError(ValueError):
    """A topology name or graph that cannot be used."""


@dataclass
class Topology:
    """A graph whose every undirected edge is two directed links."""

    name: str
    nodes: int
    edges: list[tuple[int, int]]
    links: list[tuple[int, int]] = field(init=False)
    index: dict[tuple[int, int], int] = field(init=False)

    def __post_init__(self) -> None:
        seen = set()
        for u, v in self.edges:
            if not (0 <= u < self.nodes and 0 <= v < self.nodes) or u == v:
                raise TopologyError(f"{self.name}: edge ({u}, {v}) is not between two of nodes 0..{self.nodes - 1}")
            if (u, v) in seen or (v, u) in seen:
                raise TopologyError(f"{self.name}: edge ({u}, {v}) is listed twice")
            seen.add((u, v))
        self.links = [d for u, v in self.edges for d in ((u, v), (v, u))]
        self.index = {d: i for i, d in enumerate(self.links)}
        g = self.graph()
        import networkx as nx

        if self.nodes and not nx.is_connected(g):
            raise TopologyError(f"{self.name}: the graph is not connected")

    def graph(self):
        import networkx as nx

        g = nx.Graph()
        g.add_nodes_from(range(self.nodes))
        g.add_edges_from(self.edges)
        return g

    def link_name(self, i: int) -> str:
        u, v = self.links[i]
        return f"l{u}-{v}"

    def pairs(self) -> list[tuple[int, int]]:
        """Every ordered (source, destination) pair: one path each."""
        return [(s, d) for s in range(self.nodes) for d in range(self.nodes) if s != d]

    def path_links(self, nodes: list[int]) -> list[int]:
        """A node sequence as directed-link indices."""
        try:
            return [self.index[(a, b)] for a, b in zip(nodes, nodes[1:])]
        except KeyError as e:
            raise TopologyError(f"{self.name}: {nodes} uses {e.args[0]}, which is not a link") from None


def synthetic(nodes: int, seed: int, degree: float = 3.0) -> Topology:
    """A random connected graph of about `degree` mean degree: a random spanning tree (every
    node joins a random earlier one) plus random extra edges, the recipe of RouteNet's synthetic
    training topologies' spirit (varied size and shape) without their unpublished generator."""
    if nodes < 3:
        raise TopologyError(f"a synthetic topology needs 3 nodes or more, got {nodes}")
    rng = random.Random(seed)
    order = list(range(nodes))
    rng.shuffle(order)
    edges = set()
    for k in range(1, nodes):
        u, v = order[k], order[rng.randrange(k)]
        edges.add((min(u, v), max(u, v)))
    want = max(nodes - 1, min(round(nodes * degree / 2), nodes * (nodes - 1) // 2))
    while len(edges) < want:
        u, v = rng.sample(range(nodes), 2)
        edges.add((min(u, v), max(u, v)))
    return Topology(f"synth{nodes}-{seed}", nodes, sorted(edges))


def topology(name: str) -> Topology:
    """`nsfnet`, `geant2` or `synthN-SEED` (a random graph of N nodes)."""
    if name in BUILT_IN:
        n, e = BUILT_IN[name]
        return Topology(name, n, list(e))
    if name.startswith("synth"):
        head, _, seed = name[5:].partition("-")
        if head.isdigit() and (seed.isdigit() or not seed):
            return synthetic(int(head), int(seed or 0))
    raise TopologyError(f"unknown topology {name!r}: accepted {', '.join(BUILT_IN)} or synthN-SEED (e.g. synth20-3)")


def routing(topo: Topology, k: int, seed: int) -> list[list[int]]:
    """One path per ordered pair (in `topo.pairs()` order), each drawn uniformly from the pair's
    `k` shortest simple paths by hop count (k = 1: shortest paths; ties broken by networkx's
    order). Paths are lists of directed-link indices. RouteNet's datasets use routings built the
    same way (their `SP_k_N`: shortest-path variants)."""
    if k < 1:
        raise TopologyError(f"k must be 1 or more, got {k}")
    import networkx as nx

    g = topo.graph()
    rng = random.Random(seed)
    paths = []
    for s, d in topo.pairs():
        options = list(islice(nx.shortest_simple_paths(g, s, d), k))
        paths.append(topo.path_links(options[rng.randrange(len(options))]))
    return paths


def dijkstra_path(topo: Topology, src: int, dst: int, weight: list[float]) -> list[int]:
    """The least-weight path from `src` to `dst` with a weight per directed link."""
    import networkx as nx

    g = nx.DiGraph()
    for i, (u, v) in enumerate(topo.links):
        g.add_edge(u, v, w=float(weight[i]))
    return topo.path_links(nx.dijkstra_path(g, src, dst, weight="w"))
