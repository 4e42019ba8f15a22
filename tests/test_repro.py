"""The reproduction tables' verdicts and the paper registry."""

from rtclab.repro import DIRECTION, MISSED, PAPERS, WITHIN, Row, format_table, judge


def test_judge_reads_values_bounds_and_ranges():
    assert judge(0.918, "0.86") == WITHIN
    assert judge(0.70, "0.86") == MISSED
    assert judge(2.0, "< 3") == WITHIN and judge(126, "< 3") == MISSED
    assert judge(0.91, "> 0.90 every case") == WITHIN and judge(0.90, "> 0.90") == MISSED
    assert judge(1140, "1120-1160") == WITHIN and judge(900, "1120-1160") == MISSED
    assert judge(0.2, "≈ 0", abs_tol=0.5) == WITHIN and judge(6.8, "≈ 0") == MISSED
    assert judge(1.0, "–") == "" and judge(1.0, "poor (unpredictable)") == ""
    assert judge(None, "0.5") == "not measured" and judge(float("nan"), "0.5") == "not measured"
    # Percentages are fractions, and a range may run either way.
    assert judge(-0.56, "-14% to -64% vs Copa") == WITHIN and judge(0.36, "-14% to -64%") == MISSED
    assert judge(-0.6, "<= -50% (RTP)") == WITHIN and judge(-0.4, "<= -50%") == MISSED
    assert judge(0.1, "+10% (Fig 4.19)") == WITHIN and judge(-0.06, "+10%") == MISSED


def test_rows_carry_their_verdict_into_tables_and_json():
    rows = [Row("e", "v", "m", 124.0, "130"), Row("e", "v", "gap", 6.0, "40", verdict=DIRECTION)]
    assert [r.verdict for r in rows] == [WITHIN, DIRECTION]
    assert rows[0].as_dict()["verdict"] == WITHIN
    table = format_table(rows)
    assert "verdict" in table.splitlines()[0] and DIRECTION in table


def test_every_paper_has_a_build(tmp_path):
    from importlib import import_module

    for paper in PAPERS:
        assert callable(import_module(f"rtclab.repro.{paper}").build)
