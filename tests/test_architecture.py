"""Guards on the code's shape (ARCHITECTURE.md): no new file-level import circle inside a crate.

A circle is a set of a crate's modules that reach each other through `crate::` paths outside
test code (a module's reference to its own parent does not count). A new one fails this test."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Circles known today: none. The last four were broken by giving the shared part its own file
#: (`rtclab-net`: `accounting.rs`, `any_qdisc.rs`; `rtclab-harness`: percentiles in
#: `measure.rs`, RFC 8868's figures placed by `summarize.rs`; `rtclab-media`: the policies'
#: builders beside the policies they build).
KNOWN: set = set()


def module_circles() -> set:
    found = set()
    for crate in sorted((REPO / "crates").iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue

        def name(p: Path) -> str:
            parts = list(p.relative_to(src).with_suffix("").parts)
            return "::".join(parts[:-1] if parts[-1] in ("mod", "lib") else parts)

        mods = {name(p): p for p in src.rglob("*.rs")}
        graph = {m: set() for m in mods}
        for m, p in mods.items():
            text = p.read_text(encoding="utf-8").split("#[cfg(test)]", 1)[0]
            for ref in re.findall(r"crate::([a-z_0-9]+(?:::[a-z_0-9]+)*)", text):
                parts = ref.split("::")
                target = next((t for t in ("::".join(parts[:n]) for n in range(len(parts), 0, -1)) if t in mods), None)
                if target and target != m and not m.startswith(target + "::"):
                    graph[m].add(target)
        # Tarjan's strongly connected components.
        index, low, stack, on, counter = {}, {}, [], set(), [0]

        def visit(v):
            index[v] = low[v] = counter[0]
            counter[0] += 1
            stack.append(v)
            on.add(v)
            for w in sorted(graph[v]):
                if w not in index:
                    visit(w)
                    low[v] = min(low[v], low[w])
                elif w in on:
                    low[v] = min(low[v], index[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.add((crate.name, tuple(sorted(comp))))

        for v in sorted(graph):
            if v not in index:
                visit(v)
    return found


def test_no_new_import_circle_and_none_fixed_silently():
    found = module_circles()
    assert found - KNOWN == set(), f"new import circle(s): {sorted(found - KNOWN)}"
    assert KNOWN - found == set(), f"fixed, remove from KNOWN: {sorted(KNOWN - found)}"
