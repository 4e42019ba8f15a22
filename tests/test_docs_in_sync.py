"""The algorithm docs quote `rtclab repro` rows; they must say what the code measures today.

Each doc's `| experiment | variant | metric | ours | paper | verdict |` rows are compared with the
paper's reproduction as the repro tests run it (`conftest.REPRO_RUNS`: one run per paper and
test session, shared with tests/test_cli.py, so no paper is reproduced twice). When a change
moves a figure, refresh the doc with the command in the failure message and re-read the prose
around the moved rows.
"""

from pathlib import Path

import pytest

from conftest import REPRO_RUNS
from rtclab.repro import PAPERS, doctable

ROOT = Path(__file__).resolve().parent.parent
#: The docs that quote each paper's rows.
DOCS = {"gcc": ["docs/algorithms/gcc.md"], "copa": ["docs/algorithms/copa.md"], "qlibra": ["docs/algorithms/qlibra.md"],
        "fairness": ["docs/algorithms/zoom_like.md"], "zhuge": ["docs/algorithms/zhuge.md"],
        "confucius": ["docs/algorithms/confucius.md"], "hairpin": ["docs/algorithms/hairpin.md"],
        "afr": ["docs/algorithms/afr.md"], "metis": ["docs/algorithms/metis.md"]}


def test_every_paper_has_a_guarded_doc():
    assert set(DOCS) == set(PAPERS) == set(REPRO_RUNS)


@pytest.mark.parametrize("paper", PAPERS)
def test_quoted_repro_rows_match_the_suites_run(paper, repro_runs):
    _, _, rows = repro_runs.get(paper)
    quoted = 0
    for doc in DOCS[paper]:
        text = (ROOT / doc).read_text(encoding="utf-8")
        _, changes = doctable.update(text, rows)
        assert not changes, (
            f"{doc} quotes figures that `rtclab repro {paper} --runs {REPRO_RUNS[paper]}` no longer gives:\n  "
            + "\n  ".join(changes)
            + f"\nRefresh: rtclab repro {paper} --runs {REPRO_RUNS[paper]} --out /tmp/repro-{paper} && "
            f"python -m rtclab.repro.doctable {doc} /tmp/repro-{paper}/repro.json")
        quoted += doctable.quoted_rows(text, rows)
    assert quoted, f"{' '.join(DOCS[paper])} quote no row of `rtclab repro {paper}`: the guard would guard nothing"
