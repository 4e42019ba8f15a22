"""What a new user hits first: unbounded inputs, runaway sweeps, two commands on one folder,
edited results, interrupted sweeps, and the commands' remaining tracebacks."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LONG

SMALL = """
name = "small"
duration = "5s"
[link]
capacity = "10Mbps"
[[flows]]
kind = "tcp"
rtt = "20ms"
"""



def popen(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "rtclab.cli", *map(str, args)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


# -- 3. unbounded reads ----------------------------------------------------------------------

def test_devices_and_directories_are_refused_unread(cli, tmp_path):
    (tmp_path / "tree.toml").write_text(SMALL.replace('kind = "tcp"', 'kind = "media"\ncc = "tree"')
                                        + 'media = { tree = { file = "/dev/zero" } }\n')
    cases = [
        (("classify", "/dev/zero"), "is a character device, not a capture file"),
        (("run", "/dev/zero", "--out", tmp_path / "o"), "is a character device, not a scenario file"),
        (("run", tmp_path, "--out", tmp_path / "o"), "is a directory, not a scenario file"),
        (("sweep", "/dev/zero", "--out", tmp_path / "o"), "is a character device, not a sweep file"),
        (("run", tmp_path / "tree.toml", "--out", tmp_path / "o"), "not a regular file"),
    ]
    for argv, words in cases:
        t0 = time.monotonic()
        r = cli(*argv, timeout=60)
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr)
        assert time.monotonic() - t0 < 30, argv


def test_a_large_sparse_file_costs_nothing_to_be_told_it_is_not_a_pcap(cli, tmp_path):
    big = tmp_path / "big.bin"
    with open(big, "wb") as f:
        f.truncate(2 << 30)  # 2 GiB, sparse: no disk used
    r = subprocess.run(["/usr/bin/time", "-f", "maxrss_kb=%M", sys.executable, "-m", "rtclab.cli", "classify", str(big)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a libpcap file" in r.stderr, r.stderr
    rss_kb = int(r.stderr.rsplit("maxrss_kb=", 1)[1].split()[0])
    assert rss_kb < 300_000, rss_kb  # the interpreter and numpy, not the file


def test_a_corrupt_model_file_is_named_without_numpys_pickle_advice(tmp_path):
    import numpy as np

    from rtclab.inputs import InputFileError, load_npz
    from rtclab.metis.rtc import Mlp

    bad = tmp_path / "teacher_mlp.npz"
    bad.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputFileError, match=r"teacher_mlp.npz: not a valid model file") as e:
        load_npz(bad)
    assert "allow_pickle" not in str(e.value)
    pickled = tmp_path / "pickled.npz"
    np.savez(pickled, w0=np.array([object()], dtype=object))
    with pytest.raises(InputFileError, match="Python objects, which rtclab never unpickles"):
        load_npz(pickled)
    wrong = tmp_path / "wrong.npz"
    np.savez(wrong, something=np.zeros(3))
    with pytest.raises(InputFileError, match="not a teacher model saved by rtclab"):
        Mlp.load(wrong)


# -- 4. size guards --------------------------------------------------------------------------

@pytest.mark.parametrize("sweep_extra, words", [
    ("seeds = 1000000\n", ["2,000,000 runs (2 grid points × 1,000,000 seed(s))", "--force"]),
    ('mode = "lhs"\nsamples = 1000000\n', ["1,000,000 runs (1,000,000 lhs samples × 1 seed(s))", "--force"]),
])
def test_a_runaway_sweep_is_refused_at_once_with_its_size(cli, tmp_path, sweep_extra, words):
    axis = ('[[axis]]\nfield = "link.capacity"\nvalues = ["10Mbps", "20Mbps"]\n' if "lhs" not in sweep_extra
            else '[[axis]]\nfield = "flows[0].rtt"\nrange = [10, 100]\nunit = "ms"\n')
    p = tmp_path / "big.toml"
    p.write_text(f'name = "big"\nscenario = "two-cubic"\n{sweep_extra}{axis}')
    t0 = time.monotonic()
    r = cli("sweep", p, "--out", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert all(w in r.stderr for w in words) and "at most about" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 30
    assert not (tmp_path / "out").exists() and sorted(x.name for x in tmp_path.iterdir()) == ["big.toml"]


def test_a_runaway_suite_is_refused_with_its_size(cli, tmp_path):
    r = cli("suite", "rfc8867", "--seeds", 1000000, "--out", tmp_path / "s")
    assert r.returncode == 2 and "8,000,000 runs" in r.stderr and "--force" in r.stderr, r.stderr
    assert not (tmp_path / "s").exists()


# -- 5. concurrency and honesty of outputs ---------------------------------------------------

def test_a_second_command_on_the_same_out_is_refused_while_the_first_runs(cli, tmp_path):
    scn = tmp_path / "long.toml"
    scn.write_text(LONG)
    out = tmp_path / "out"
    first = popen("run", scn, "--out", out, "--no-plots")
    lock = tmp_path / ".out.lock"
    deadline = time.monotonic() + 60
    while not lock.exists():
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    r = cli("run", scn, "--out", out, "--no-plots")
    assert r.returncode == 2 and "another rtclab command is writing it right now" in r.stderr, r.stderr
    r = cli("repro", "afr", "--runs", 1, "--out", out)  # any command with --out
    assert r.returncode == 2 and "another rtclab command" in r.stderr, r.stderr
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    assert first.returncode == 130
    assert not lock.exists() and not out.exists()  # the lock goes with its holder
    assert cli("run", _small(tmp_path), "--out", out,
               "--no-plots").returncode == 0


def _small(tmp_path: Path) -> Path:
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


def test_a_lock_left_by_a_killed_command_does_not_block_the_next(cli, tmp_path):
    scn = tmp_path / "long.toml"
    scn.write_text(LONG)
    first = popen("run", scn, "--out", tmp_path / "out", "--no-plots")
    lock = tmp_path / ".out.lock"
    deadline = time.monotonic() + 60
    while not lock.exists():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    first.kill()
    first.communicate()
    assert lock.exists()  # SIGKILL: no clean-up, but the kernel released the lock
    r = cli("run", _small(tmp_path), "--out", tmp_path / "out", "--no-plots")
    assert r.returncode == 0, r.stderr
    assert not lock.exists()


def test_a_file_the_user_edited_in_an_output_folder_is_not_overwritten(cli, tmp_path):
    scn = _small(tmp_path)
    out = tmp_path / "out"
    assert cli("run", scn, "--out", out, "--no-plots").returncode == 0
    summary = out / "summary.json"
    edited = summary.read_text().replace('"small"', '"small (my note)"', 1)
    summary.write_text(edited)
    r = cli("run", scn, "--out", out, "--no-plots")
    assert r.returncode == 2 and "summary.json changed since rtclab wrote it" in r.stderr, r.stderr
    assert summary.read_text() == edited
    # An untouched folder is still replaced as before.
    assert cli("run", scn, "--out", tmp_path / "out2", "--no-plots").returncode == 0
    assert cli("run", scn, "--out", tmp_path / "out2", "--no-plots").returncode == 0


SWEEP = """
name = "many"
scenario = "base.toml"
seeds = 40
[[axis]]
field = "link.capacity"
values = ["5Mbps"]
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_sweep_says_what_it_kept_and_how_to_resume(tmp_path, sig):
    (tmp_path / "base.toml").write_text(SMALL.replace('"5s"', '"120s"'))
    (tmp_path / "s.toml").write_text(SWEEP)
    out = tmp_path / "store"
    p = popen("sweep", tmp_path / "s.toml", "--out", out, "--workers", 1, "--no-progress", start_new_session=True)
    runs = out / "runs"
    deadline = time.monotonic() + 120
    while len([d for d in runs.iterdir() if not d.name.startswith(".")] if runs.is_dir() else []) < 2:
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    p.send_signal(sig)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert "nothing was written" not in err and "Traceback" not in err and "Exception ignored" not in err, err
    kept = len([d for d in runs.iterdir() if not d.name.startswith(".")])
    assert f"{kept} of 40 runs are kept in {out}" in err, err
    assert f"--out {out} --workers 1 --no-progress --resume" in err, err
    r = subprocess.run([sys.executable, "-m", "rtclab.cli", "sweep", str(tmp_path / "s.toml"), "--out", str(out),
                        "--resume", "--no-progress", "--no-plots"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and f"({kept} already in the store" in r.stdout, r.stderr


# -- 7. remaining tracebacks -----------------------------------------------------------------

def test_sweep_errors_are_messages(cli, tmp_path):
    missing = tmp_path / "m.toml"
    missing.write_text('name = "m"\nscenario = "nowhere.toml"\n')
    r = cli("sweep", missing, "--out", tmp_path / "o")
    assert r.returncode == 2 and "scenario = 'nowhere.toml'" in r.stderr and "Traceback" not in r.stderr, r.stderr
    ok = tmp_path / "ok.toml"
    ok.write_text('name = "ok"\nscenario = "two-cubic"\n')
    (tmp_path / "afile").write_text("mine")
    r = cli("sweep", ok, "--out", tmp_path / "afile")
    assert r.returncode == 2 and "not a directory" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert (tmp_path / "afile").read_text() == "mine"
    r = cli("sweep", ok, "--out", "/proc/rtclab-cannot-write-here")
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr


def test_compare_strict_turns_a_metric_outside_tolerance_into_exit_1(tmp_path, monkeypatch, capsys):
    from rtclab import cli, compare
    from rtclab.compare import Diff

    scn = _small(tmp_path)
    summary = {"scenario": "small", "seed": 1}
    diffs = [Diff("link", "utilization", 0.99, 0.5, 0.05)]
    monkeypatch.setattr(compare, "compare", lambda *a, **k: (summary, summary, diffs))
    monkeypatch.setattr(compare, "write_compare", lambda *a, **k: tmp_path / "c")
    assert cli.main(["compare", str(scn), "--out", str(tmp_path / "c")]) == 0
    assert cli.main(["compare", str(scn), "--out", str(tmp_path / "c"), "--strict"]) == 1
    assert "--strict: 1 metric(s) outside tolerance: link utilization" in capsys.readouterr().err


# -- 9. UX -----------------------------------------------------------------------------------

def test_bench_steps_are_announced_on_stderr(capsys):
    from rtclab.progress import Stages

    st = Stages("bench sim", 2, enabled=True)
    st.stage("one")
    st.stage("two")
    st.done()
    err = capsys.readouterr().err
    assert "bench sim [1/2] one ..." in err and "bench sim [2/2] two ..." in err and err.count(" s\n") == 2


def test_the_progress_bar_is_drawn_on_a_real_terminal(tmp_path):
    """Under a pseudo-terminal (what a person's terminal is), with no RTCLAB_PROGRESS, the bar appears."""
    import pty

    scn = tmp_path / "medium.toml"
    scn.write_text(LONG.replace('"400s"', '"150s"'))
    env = {k: v for k, v in os.environ.items() if k != "RTCLAB_PROGRESS"}
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "rtclab.cli", "run", str(scn), "--out", str(tmp_path / "o"),
                          "--no-plots"], stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
    os.close(slave)
    seen = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        seen += chunk
    p.wait(timeout=300)
    os.close(master)
    assert p.returncode == 0, seen.decode(errors="replace")
    assert b"simulating:" in seen and b"150.0/150.0 s sim" in seen, seen[-2000:]


def test_examples_validate_and_the_readme_points_to_them_and_to_every_doc(cli):
    repo = Path(__file__).resolve().parents[1]
    examples = sorted((repo / "examples").glob("*.toml"))
    scenarios = [p for p in examples if not p.name.startswith("sweep-")]
    assert len(scenarios) >= 4
    r = cli("validate", *scenarios)
    assert r.returncode == 0, r.stderr
    from rtclab.sweep import load_sweep, plan

    for s in examples:
        if s.name.startswith("sweep-"):
            assert plan(load_sweep(s))
    readme = (repo / "README.md").read_text()
    for p in examples:
        assert f"examples/{p.name}" in readme, p.name
    docs = sorted((repo / "docs").rglob("*.md"))
    missing = [str(d.relative_to(repo)) for d in docs if str(d.relative_to(repo)) not in readme]
    assert missing == []
    assert "python/rtclab/data/README.md" in readme


def test_the_default_output_folder_is_the_one_the_readme_names(cli, tmp_path):
    scn = tmp_path / "my-file.toml"
    scn.write_text(SMALL)  # name = "small": the folder follows the file, as the README says
    r = cli("run", scn, "--no-plots", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "rtclab-out" / "my-file" / "summary.json").is_file()
    assert json.loads((tmp_path / "rtclab-out" / "my-file" / "summary.json").read_text())["scenario"] == "small"
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "default `rtclab-out/<file name without .toml, or the built-in's name>`" in readme


def test_every_command_in_the_readme_parses_as_written():
    """The README's command list is what the CLI takes: each line parses (subcommand, options);
    the commands themselves run in the tests of their own (test_cli, test_emu, test_sweep, ...)."""
    import shlex

    from rtclab.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    i = readme.index("## Using it")
    block = readme[readme.index("```sh", i) + 5:readme.index("```", readme.index("```sh", i) + 5)]
    lines = [ln.split("  #", 1)[0].strip() for ln in block.splitlines() if ln.startswith("rtclab ")]
    assert len(lines) >= 30
    parser = build_parser()
    for ln in lines:
        argv = shlex.split(ln)[1:]
        if "--" in argv:
            argv = argv[:argv.index("--")]
        if argv == ["--version"]:
            continue
        try:
            args = parser.parse_args(argv)
        except SystemExit:
            raise AssertionError(f"README command does not parse: {ln}") from None
        assert getattr(args, "func", None), ln


def test_a_users_file_named_like_the_lock_is_left_alone(cli, tmp_path):
    mine = tmp_path / ".out.lock"
    mine.write_text("my notes")
    r = cli("run", _small(tmp_path), "--out", tmp_path / "out", "--no-plots")
    assert r.returncode == 2 and "was not written by rtclab" in r.stderr, r.stderr
    assert mine.read_text() == "my notes" and not (tmp_path / "out").exists()
