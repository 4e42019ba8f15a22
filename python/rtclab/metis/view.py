"""An SVG (and a self-contained HTML page around it) of a Metis tree: each split shows its rule
and sample count, each leaf its output and a "palette" bar of the class histogram of the samples
that reached it (the dissertation's Fig. 5.5 style)."""

from __future__ import annotations

import html

import numpy as np

from rtclab.metis.tree import Tree

PALETTE = ["#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c"]
W, H, GAP_X, GAP_Y = 150, 46, 12, 34


def _fmt(v: float) -> str:
    return f"{v:.4g}"


def svg(tree: Tree, class_names: list[str] | None = None, max_nodes: int = 2000) -> str:
    if tree.node_count > max_nodes:
        raise ValueError(f"the tree has {tree.node_count} nodes; the view draws at most {max_nodes}")
    depth = np.zeros(tree.node_count, dtype=int)
    x = np.zeros(tree.node_count)
    next_leaf = [0]

    def place(i):
        if tree.feature[i] < 0:
            x[i] = next_leaf[0]
            next_leaf[0] += 1
            return
        for c in (tree.left[i], tree.right[i]):
            depth[c] = depth[i] + 1
            place(c)
        x[i] = (x[tree.left[i]] + x[tree.right[i]]) / 2

    import sys
    sys.setrecursionlimit(max(1000, 4 * tree.node_count))
    place(0)
    width = int(next_leaf[0] * (W + GAP_X) + GAP_X)
    height = int((depth.max() + 1) * (H + GAP_Y) + GAP_Y)
    px = lambda i: GAP_X + x[i] * (W + GAP_X)  # noqa: E731
    py = lambda i: GAP_Y / 2 + depth[i] * (H + GAP_Y)  # noqa: E731
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">']
    for i in range(tree.node_count):
        if tree.feature[i] >= 0:
            for c, lab in ((tree.left[i], "yes"), (tree.right[i], "no")):
                parts.append(f'<line x1="{px(i) + W / 2:.1f}" y1="{py(i) + H:.1f}" x2="{px(c) + W / 2:.1f}" '
                             f'y2="{py(c):.1f}" stroke="#999"/>')
                parts.append(f'<text x="{(px(i) + px(c)) / 2 + W / 2:.1f}" y="{(py(i) + H + py(c)) / 2:.1f}" '
                             f'fill="#777" font-size="9">{lab}</text>')
    for i in range(tree.node_count):
        hist = tree.histogram[i] if tree.task == "classification" else np.array([1.0])
        n = float(hist.sum()) if tree.task == "classification" else float(tree.histogram[i][0])
        leaf = tree.feature[i] < 0
        parts.append(f'<g><title>node {i}: {int(round(n))} samples</title>'
                     f'<rect x="{px(i):.1f}" y="{py(i):.1f}" width="{W}" height="{H}" rx="4" '
                     f'fill="{"#f4f8ff" if leaf else "#fff"}" stroke="#555"/>')
        if leaf:
            v = tree.value[i]
            label = (class_names[int(v)] if class_names and tree.task == "classification" and 0 <= int(v) < len(class_names)
                     else _fmt(v))
            line1 = f"→ {label}"
        else:
            line1 = f"{tree.feature_names[tree.feature[i]]} ≤ {_fmt(tree.threshold[i])}"
        parts.append(f'<text x="{px(i) + 5:.1f}" y="{py(i) + 15:.1f}">{html.escape(line1)}</text>')
        parts.append(f'<text x="{px(i) + 5:.1f}" y="{py(i) + 28:.1f}" fill="#555">n = {int(round(n))}</text>')
        if tree.task == "classification" and hist.sum() > 0:
            x0 = px(i) + 5
            for k, c in enumerate(hist / hist.sum()):
                if c <= 0:
                    continue
                cls = int(tree.classes[k]) if k < len(tree.classes) else k
                parts.append(f'<rect x="{x0:.1f}" y="{py(i) + 34:.1f}" width="{(W - 10) * c:.1f}" height="7" '
                             f'fill="{PALETTE[cls % len(PALETTE)]}"/>')
                x0 += (W - 10) * c
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


def html_page(tree: Tree, title: str, class_names: list[str] | None = None) -> str:
    legend = ""
    if tree.task == "classification":
        items = []
        for k, c in enumerate(tree.classes):
            name = class_names[int(c)] if class_names and 0 <= int(c) < len(class_names) else _fmt(c)
            items.append(f'<span style="display:inline-block;width:10px;height:10px;background:'
                         f'{PALETTE[int(c) % len(PALETTE)]}"></span> {html.escape(name)}')
        legend = "<p>Leaf palette (share of samples per class): " + " &nbsp; ".join(items) + "</p>"
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
            f"<body style='font-family:sans-serif'><h1>{html.escape(title)}</h1>"
            f"<p>{tree.leaf_count} leaves, {tree.node_count} nodes, depth {tree.depth()}; "
            f"a sample goes left when the rule holds.</p>{legend}"
            f"<div style='overflow:auto'>{svg(tree, class_names)}</div></body></html>")
