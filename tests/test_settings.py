"""fzn_gpu/settings.py: every environment variable read there alone, declared, documented in
docs/SETTINGS.md as generated, read at each use, and a bad value one clear error."""

from __future__ import annotations

import re

import pytest

from fzn_gpu import settings
from fzn_gpu.errors import FznError

from helpers import ROOT

PACKAGE = ROOT / "fzn_gpu"
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if p.name != "settings.py")


def test_no_module_but_settings_touches_the_environment():
    touching = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in SOURCES
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if re.search(r"\bos\.(environ|getenv|putenv|unsetenv)\b|\bfrom os import\b.*\benviron\b", line)
    ]
    assert touching == []


def test_every_variable_named_in_the_package_is_declared_and_every_declared_one_is_read():
    named = {
        name
        for p in SOURCES
        for name in re.findall(r"\b(FZN_GPU_[A-Z0-9_]*[A-Z0-9])\b", p.read_text())
        if not name.endswith("_DEVICES") or name in settings.BY_NAME  # FZN_GPU_<ENGINE>_DEVICES built by name
    }
    assert named - set(settings.BY_NAME) == set()
    read = {name for p in SOURCES for name in re.findall(r"settings\.\w+\(\s*\"([A-Z][A-Z0-9_]+)\"", p.read_text())}
    assert read - set(settings.BY_NAME) == set()
    built = {f"FZN_GPU_{engine.upper()}_DEVICES" for engine in ("bnb", "lns", "complete", "restarts")}
    assert {s.name for s in settings.SETTINGS if s.name.startswith("FZN_GPU_")} - read - built == set()


def test_the_documentation_is_generated_from_the_list():
    assert (ROOT / "docs" / "SETTINGS.md").read_text() == settings.markdown(), (
        "docs/SETTINGS.md is stale: python -m fzn_gpu.settings > docs/SETTINGS.md"
    )
    assert all(s.group in settings.GROUPS and s.doc for s in settings.SETTINGS)
    assert len(settings.BY_NAME) == len(settings.SETTINGS)


def test_an_undeclared_name_is_a_programming_error():
    with pytest.raises(KeyError, match="not declared"):
        settings.text("FZN_GPU_NO_SUCH_THING")


@pytest.mark.parametrize(
    "reader, name, text, default, expected",
    [
        (settings.flag, "FZN_GPU_PROFILE", None, False, False),
        (settings.flag, "FZN_GPU_PROFILE", "1", False, True),
        (settings.flag, "FZN_GPU_PROFILE", " 0 ", True, False),
        (settings.flag, "FZN_GPU_PROFILE", "yes", False, FznError),
        (settings.integer, "FZN_GPU_LOCAL", None, 7, 7),
        (settings.integer, "FZN_GPU_LOCAL", "", 7, 7),
        (settings.integer, "FZN_GPU_LOCAL", "64", 7, 64),
        (settings.integer, "FZN_GPU_LOCAL", "0", 7, FznError),  # at least 1
        (settings.integer, "FZN_GPU_SLICE_BUDGET", "0", 5, 0),  # at least 0
        (settings.integer, "FZN_GPU_SLICE_BUDGET", "-1", 5, FznError),
        (settings.integer, "FZN_GPU_LOCAL", "3.5", 7, FznError),
        (settings.number, "FZN_GPU_SWITCH_INTERVAL", "0.001", 0.5, 0.001),
        (settings.number, "FZN_GPU_SWITCH_INTERVAL", "soon", 0.5, FznError),
        (settings.number, "FZN_GPU_SERVER_IDLE_S", "0", 1.0, FznError),  # at least 0.001
        (settings.number, "FZN_GPU_BUCKET_WORK", "nan", 1.0, FznError),
        (settings.choice, "FZN_GPU_KERNEL", None, "item", "item"),
        (settings.choice, "FZN_GPU_KERNEL", "Group", "item", "group"),
        (settings.choice, "FZN_GPU_KERNEL", "warp", "item", FznError),
    ],
)
def test_each_reader_checks_its_value(monkeypatch, reader, name, text, default, expected):
    if text is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, text)
    if expected is FznError:
        with pytest.raises(FznError, match=name) as err:
            reader(name, default)
        assert f"unset {name}" in err.value.fix
    else:
        assert reader(name, default) == expected


def test_values_are_read_at_each_use_not_at_import(monkeypatch):
    """A run forked by the solver server takes its client's environment after the server
    imported every module: what a module read at import would be the server's."""
    from fzn_gpu.engine.runner import SliceBudget

    monkeypatch.setenv("FZN_GPU_TAIL_SHARE", "3")
    assert SliceBudget().TAIL_SHARE == 3
    monkeypatch.delenv("FZN_GPU_TAIL_SHARE")
    assert SliceBudget().TAIL_SHARE == SliceBudget.TAIL_SHARE == 5


def test_the_slice_target_steers_the_budget(monkeypatch):
    """FZN_GPU_SLICE_S: the seconds a slice aims at; a slice of 0.1 s on 100 units moves the
    budget toward the target's share of it (halved at 0.05 s, doubled at 0.2 s), and a slice
    the device's clock ends lasts the target."""
    from fzn_gpu.engine.runner import SliceBudget

    for target, value in ((None, 50), ("0.2", 200)):
        if target is not None:
            monkeypatch.setenv("FZN_GPU_SLICE_S", target)
        budget = SliceBudget()
        budget.after_slice(100, 0.1)
        assert budget.value == value and budget.clock_us(None) == int(budget.TARGET_S * 1e6)
    monkeypatch.setenv("FZN_GPU_SLICE_S", "0")
    with pytest.raises(FznError, match="FZN_GPU_SLICE_S"):
        SliceBudget()


def test_a_served_run_takes_its_clients_environment(monkeypatch):
    monkeypatch.setenv("FZN_GPU_LOCAL", "4")
    saved = settings.environment()
    try:
        settings.replace_environment({**saved, "FZN_GPU_LOCAL": "8"})
        assert settings.integer("FZN_GPU_LOCAL", 1) == 8
    finally:
        settings.replace_environment(saved)
    assert settings.integer("FZN_GPU_LOCAL", 1) == 4
