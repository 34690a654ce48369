"""The devices' ranking kept between runs (engine/ranking.py): a device a recent search of the
same model on the same devices judged not paying is left out of the next ones from the start,
tried again after RECHECK_RUNS searches or RECHECK_S seconds; the first device never; another
model gets its own trial; a record that is not the user's, or not readable, counts as none."""

import os
import threading
import time
from types import SimpleNamespace

import numpy as np
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


M = "model-a"  # a model's key (ranking.model_key)


def test_a_device_judged_not_paying_is_left_out_until_it_is_tried_again(ranked):
    assert ranking.left_out([GPU, CPU], False, M) == {}  # no record
    now = time.time()
    ranking.record([GPU, CPU], False, M, {"gpu": (0.02, False), "cpu": (0.03, True)}, now=now)
    for k in range(ranking.RECHECK_RUNS):
        out = ranking.left_out([GPU, CPU], False, M, now=now + 1)
        assert list(out) == ["cpu"] and "0.030" in out["cpu"], k  # the first device never
    assert ranking.left_out([GPU, CPU], False, M, now=now + 1) == {}  # its trial again
    ranking.record([GPU, CPU], False, M, {"cpu": (0.03, True)}, now=now)
    assert ranking.left_out([GPU, CPU], False, M, now=now + ranking.RECHECK_S + 1) == {}  # too old
    assert list(ranking.left_out([GPU, CPU], False, M, now=now + 1)) == ["cpu"]
    # another match-up: a float model's work-item kernel, other devices, another model
    assert ranking.left_out([GPU, CPU], True, M, now=now + 1) == {}
    assert ranking.left_out([CPU, GPU], False, M, now=now + 1) == {}  # the CPU first: never out
    assert ranking.left_out([GPU, CPU], False, "model-b", now=now + 1) == {}
    ranking.record([GPU, CPU], False, M, {"cpu": (0.2, True)}, now=now)  # it pays
    assert ranking.left_out([GPU, CPU], False, M, now=now + 1) == {}


def test_each_model_keeps_its_own_verdict_and_the_oldest_go(ranked, monkeypatch):
    """A CPU that pays on one model (all-interval series) and not on another (n-queens): each
    search of either finds its own verdict; past MODELS_KEPT models the oldest verdicts go."""
    now = time.time()
    ranking.record([GPU, CPU], False, "queens", {"cpu": (0.035, True)}, now=now)
    ranking.record([GPU, CPU], False, "intervals", {"cpu": (0.13, True)}, now=now + 1)
    assert list(ranking.left_out([GPU, CPU], False, "queens", now=now + 2)) == ["cpu"]
    assert ranking.left_out([GPU, CPU], False, "intervals", now=now + 2) == {}
    monkeypatch.setattr(ranking, "MODELS_KEPT", 3)
    for k in range(3):
        ranking.record([GPU, CPU], False, f"other{k}", {"cpu": (0.01, True)}, now=now + 10 + k)
    assert ranking.left_out([GPU, CPU], False, "queens", now=now + 20) == {}  # gone: judged longest ago
    assert list(ranking.left_out([GPU, CPU], False, "other0", now=now + 20)) == ["cpu"]


def test_the_model_key_tells_models_and_instances_apart():
    """Its constraints' kinds and counts, its variables and domains: the same for the same model
    and data, another for other data or another model."""

    def dm(kinds, nv=10, nf=0, nwords=1, maxd=10):
        return SimpleNamespace(ckind=np.array(kinds, np.int32), nv=nv, nf=nf, nwords=nwords, maxd=maxd)

    a = ranking.model_key(dm([1, 1, 2]))
    assert a == ranking.model_key(dm([2, 1, 1]))  # the same rows in another order
    others = [dm([1, 2, 2]), dm([1, 1, 2, 3]), dm([1, 1, 2], nv=11), dm([1, 1, 2], nf=1), dm([1, 1, 2], maxd=12)]
    assert len({a, *map(ranking.model_key, others)}) == 1 + len(others)
    assert ranking.model_key(dm([])) != a


def test_the_line_depends_on_hand_over_and_is_read_at_each_search(ranked, monkeypatch):
    """A share of 0.12 pays where the device's searches can hand over (MIN_NODE_SHARE) and not
    where they cannot (MIN_NODE_SHARE_HELD, a float model's); FZN_GPU_MIN_NODE_SHARE and the
    switch are read at each search."""
    now = time.time()
    ranking.record([GPU, CPU], False, M, {"cpu": (0.12, True)}, now=now)
    ranking.record([GPU, CPU], True, M, {"cpu": (0.12, False)}, now=now)
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}
    assert list(ranking.left_out([GPU, CPU], True, M, now=now)) == ["cpu"]
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "0.05")
    assert ranking.left_out([GPU, CPU], True, M, now=now) == {}
    monkeypatch.setenv("FZN_GPU_MIN_NODE_SHARE", "0.15")
    assert list(ranking.left_out([GPU, CPU], False, M, now=now)) == ["cpu"]
    monkeypatch.setenv("FZN_GPU_RANKING", "0")
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}


def test_a_record_not_the_users_or_unreadable_counts_as_none(ranked):
    now = time.time()
    ranking.record([GPU, CPU], False, M, {"cpu": (0.01, True)}, now=now)
    (path,) = [p for p in ranking.ranking_dir().iterdir() if not p.name.startswith(".")]
    assert list(ranking.left_out([GPU, CPU], False, M, now=now)) == ["cpu"]
    if os.getuid() == 0:  # root can give it away
        os.chown(path, 12345, 12345)
        assert ranking.left_out([GPU, CPU], False, M, now=now) == {}
        os.chown(path, 0, 0)
    path.write_text("{not json")
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}
    path.write_text('{"models": {"model-a": {"at": "yesterday", "shares": []}}}')
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}
    path.write_text('{"models": {"model-a": {"at": 1, "shares": {"cpu": {"share": "low"}}}}}')
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}
    ranking.record([GPU, CPU], False, "model-b", {"cpu": (0.01, True)}, now=now)  # over a bad record
    assert list(ranking.left_out([GPU, CPU], False, "model-b", now=now)) == ["cpu"]


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
    (model,) = json.loads(record.read_text())["models"].values()
    judged = model["shares"]
    names = [stat(first.stdout, f"d{i}_device").strip('"') for i in (0, 1)]
    assert judged and set(judged) <= set(names) and all(v["share"] < 1 for v in judged.values()), judged
    model["shares"] = {names[1]: {"share": 0.01, "skipped": 0}}
    record.write_text(json.dumps({"models": {k: model for k in json.loads(record.read_text())["models"]}}))
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
    ranking.record([GPU, CPU], False, M, {"cpu": (0.01, True)}, now=now)
    folder = ranking.ranking_dir()
    assert list(ranking.left_out([GPU, CPU], False, M, now=now)) == ["cpu"]
    folder.chmod(0o777)
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}  # not read
    (record,) = [p for p in folder.iterdir() if not p.name.startswith(".")]
    before = record.read_text()
    ranking.record([GPU, CPU], False, M, {"cpu": (0.5, True)}, now=now)
    assert record.read_text() == before  # not written
    folder.chmod(0o700)
    target = ranked / "elsewhere"
    target.write_text("untouched")
    tmp = record.with_name(f".{record.name}.{os.getpid()}.{threading.get_ident()}")
    tmp.symlink_to(target)
    ranking.record([GPU, CPU], False, M, {"cpu": (0.5, True)}, now=now)
    assert target.read_text() == "untouched" and record.read_text() == before  # the write gave up
    tmp.unlink()
    ranking.record([GPU, CPU], False, M, {"cpu": (0.5, True)}, now=now)
    assert ranking.left_out([GPU, CPU], False, M, now=now) == {}  # it pays now
