"""The devices' ranking kept between runs (engine/ranking.py): a device a recent search on the
same devices judged not paying is left out of the next ones from the start, tried again after
RECHECK_RUNS searches or RECHECK_S seconds; the first device never; a record that is not the
user's, or not readable, counts as none."""

import os
import threading
import time

import pytest

from fzn_gpu.engine import ranking
from fzn_gpu.runtime.device import Device

from test_cli import fzn, queens_by_pairs, run
from test_multidevice import stat

GPU = Device(0, None, "gpu", "NVIDIA CUDA", True, 132, 1 << 37, 1 << 35)
CPU = Device(1, None, "cpu", "Portable Computing Language", False, 16, 1 << 36, 1 << 34)


@pytest.fixture
def ranked(tmp_path, monkeypatch):
    monkeypatch.setenv("FZN_GPU_RANKING", "1")
    monkeypatch.setenv("FZN_GPU_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("FZN_GPU_MIN_NODE_SHARE", raising=False)
    return tmp_path


def test_a_device_judged_not_paying_is_left_out_until_it_is_tried_again(ranked):
    assert ranking.left_out([GPU, CPU], floats=False) == {}  # no record
    now = time.time()
    ranking.record([GPU, CPU], False, {"gpu": 0.02, "cpu": 0.03}, now=now)
    for k in range(ranking.RECHECK_RUNS):
        out = ranking.left_out([GPU, CPU], floats=False, now=now + 1)
        assert list(out) == ["cpu"] and "0.030" in out["cpu"], k  # the first device never
    assert ranking.left_out([GPU, CPU], floats=False, now=now + 1) == {}  # its trial again
    ranking.record([GPU, CPU], False, {"cpu": 0.03}, now=now)
    assert ranking.left_out([GPU, CPU], floats=False, now=now + ranking.RECHECK_S + 1) == {}  # too old
    assert list(ranking.left_out([GPU, CPU], floats=False, now=now + 1)) == ["cpu"]
    # another match-up: a float model's work-item kernel, or other devices
    assert ranking.left_out([GPU, CPU], floats=True, now=now + 1) == {}
    assert ranking.left_out([CPU, GPU], floats=False, now=now + 1) == {}  # the CPU first: never out
    ranking.record([GPU, CPU], False, {"cpu": 0.2}, now=now)  # it pays
    assert ranking.left_out([GPU, CPU], floats=False, now=now + 1) == {}


def test_the_threshold_and_the_switch_are_read_at_each_search(ranked, monkeypatch):
    now = time.time()
    ranking.record([GPU, CPU], False, {"cpu": 0.1}, now=now)
    assert list(ranking.left_out([GPU, CPU], floats=False, now=now)) == ["cpu"]
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "0.05")
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "0.15")
    monkeypatch.setenv("FZN_GPU_RANKING", "0")
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}


def test_a_record_not_the_users_or_unreadable_counts_as_none(ranked):
    now = time.time()
    ranking.record([GPU, CPU], False, {"cpu": 0.01}, now=now)
    (path,) = [p for p in ranking.ranking_dir().iterdir() if not p.name.startswith(".")]
    if os.getuid() == 0:  # root can give it away
        os.chown(path, 12345, 12345)
        assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}
        os.chown(path, 0, 0)
    path.write_text("{not json")
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}
    path.write_text('{"at": "yesterday", "shares": []}')
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}


def test_a_search_records_its_verdicts_and_the_next_starts_without_the_device(ranked, monkeypatch):
    """Two CPU sub-devices, the threshold at 1: the first search judges them (the one judged
    first leaves) and records the verdict; with the record saying the second device does not
    pay, the next search leaves it out from the start and says so under -s; both count exactly."""
    import json

    monkeypatch.setenv("FZN_GPU_CPU_SUBDEVICES", "2")
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "1")
    path = fzn(ranked, queens_by_pairs(13))
    first = run("-a", "--count-only", "--bucket", "off", "-s", path)
    assert first.returncode == 0 and stat(first.stdout, "solutions") == "73712", first.stderr
    assert stat(first.stdout, "devices") == "2" and stat(first.stdout, "devicesRankedOut") is None
    (record,) = [p for p in ranking.ranking_dir().iterdir() if not p.name.startswith(".")]
    judged = json.loads(record.read_text())["shares"]
    names = [stat(first.stdout, f"d{i}_device").strip('"') for i in (0, 1)]
    assert judged and set(judged) <= set(names) and all(v["share"] < 1 for v in judged.values()), judged
    record.write_text(json.dumps({"at": time.time(), "shares": {names[1]: {"share": 0.01, "skipped": 0}}}))
    second = run("-a", "--count-only", "--bucket", "off", "-s", "-v", path)
    assert second.returncode == 0 and stat(second.stdout, "solutions") == "73712", second.stderr
    out = stat(second.stdout, "devicesRankedOut")
    assert out is not None and names[1] in out and stat(second.stdout, "devices") == "1", second.stdout
    assert "leaving out" in second.stderr and "Traceback" not in second.stderr


def test_a_folder_others_may_write_is_neither_read_nor_written(ranked):
    """A cache folder others may write in (FZN_GPU_CACHE_DIR under a shared /tmp, say): a record
    there could be another user's, so none is read, none written; a link at the temporary
    file's name is never followed."""
    now = time.time()
    ranking.record([GPU, CPU], False, {"cpu": 0.01}, now=now)
    folder = ranking.ranking_dir()
    assert list(ranking.left_out([GPU, CPU], floats=False, now=now)) == ["cpu"]
    folder.chmod(0o777)
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}  # not read
    (record,) = [p for p in folder.iterdir() if not p.name.startswith(".")]
    before = record.read_text()
    ranking.record([GPU, CPU], False, {"cpu": 0.5}, now=now)
    assert record.read_text() == before  # not written
    folder.chmod(0o700)
    target = ranked / "elsewhere"
    target.write_text("untouched")
    tmp = record.with_name(f".{record.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.symlink_to(target)
    ranking.record([GPU, CPU], False, {"cpu": 0.5}, now=now)
    assert target.read_text() == "untouched" and record.read_text() == before  # the write gave up
    tmp.unlink()
    ranking.record([GPU, CPU], False, {"cpu": 0.5}, now=now)
    assert ranking.left_out([GPU, CPU], floats=False, now=now) == {}  # it pays now
