"""The algorithm docs quote `rtclab repro` rows; they must say what the code measures today.

Each doc's `| experiment | variant | metric | ours | paper | verdict |` rows are compared with a
fresh run of the paper's reproduction (deterministic: same code, same figures). When a change
moves a figure, refresh the doc with the command in the failure message and re-read the prose
around the moved rows.
"""

from pathlib import Path

import pytest

from rtclab.api import reproduce
from rtclab.repro import doctable

ROOT = Path(__file__).resolve().parent.parent
DOCS = [("gcc", "docs/algorithms/gcc.md"), ("copa", "docs/algorithms/copa.md"),
        ("qlibra", "docs/algorithms/qlibra.md")]


@pytest.mark.parametrize("paper,doc", DOCS, ids=[p for p, _ in DOCS])
def test_quoted_repro_rows_match_a_fresh_run(paper, doc):
    rows = reproduce(paper, progress=False)
    text = (ROOT / doc).read_text(encoding="utf-8")
    _, changes = doctable.update(text, rows)
    assert not changes, (
        f"{doc} quotes figures that `rtclab repro {paper}` no longer gives:\n  " + "\n  ".join(changes)
        + f"\nRefresh: rtclab repro {paper} --out /tmp/repro-{paper} && "
        f"python -m rtclab.repro.doctable {doc} /tmp/repro-{paper}/repro.json")
