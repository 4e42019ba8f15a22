"""The synthetic web-page generator of the Confucius web-burst experiment."""

import math

import numpy as np
import pytest

from rtclab.repro import web_pages as w


def test_flows_per_page_follow_the_published_median_and_quartile():
    n = np.array([len(w.page(s, 0.04)) for s in range(4000)])
    assert abs(np.median(n) - 27) <= 2 and abs(np.percentile(n, 75) - 56) <= 4
    assert 0.07 < np.mean(n > 100) < 0.15, "over 100 flows for some sites (Fig 8.1)"
    assert n.min() >= 1 and n.max() <= w.MAX_FLOWS
    assert math.isclose(w.flows_sigma(), 1.0812, abs_tol=1e-3)


def test_a_page_is_its_seeds_document_first_sizes_bounded():
    a, b = w.page(7, 0.04), w.page(7, 0.04)
    assert a == b and a != w.page(8, 0.04)
    assert a[0].start_s == 0.0
    assert all(0.08 <= f.start_s <= 0.08 + w.SPREAD_S for f in a[1:])
    sizes = np.concatenate([[f.size_b for f in w.page(s, 0.04)] for s in range(300)])
    assert sizes.min() >= w.MIN_SIZE_B and sizes.max() <= w.MAX_SIZE_B
    assert 12_000 < np.median(sizes) < 18_000


def test_pages_become_tcp_flows_a_scenario_accepts():
    from rtclab.runner import run

    flows = w.tcp_flows(w.page(3, 0.04)[:4], 1.0, "40ms")
    assert flows[0]["start"] == "1.000000s" and flows[0]["size"].endswith("B")
    res = run({"duration": "6s", "link": {"capacity": "20Mbps", "queue": {"limit": "200pkt"}}, "flows": flows}, seed=1)
    assert all(f["completion_time_s"] is not None for f in res.summary["flows"])


def test_a_page_needs_a_positive_rtt():
    with pytest.raises(ValueError, match="rtt_s must be positive"):
        w.page(1, 0.0)
