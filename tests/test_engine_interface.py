"""Every engine implements engine.interface.Engine: run, progress, extra_stats, and the runners
and shares the statistics read; SolveRun chooses among them in one place."""

import inspect

import pytest

from fzn_gpu.engine.adaptive import AdaptiveSearch
from fzn_gpu.engine.bucket import BucketCount, BucketSearch
from fzn_gpu.engine.complete import CompleteSearch
from fzn_gpu.engine.interface import Engine
from fzn_gpu.engine.lns import LnsSearch
from fzn_gpu.engine.portfolio import PortfolioSearch
from fzn_gpu.engine.restart import RestartSearch
from fzn_gpu.engine.sat_portfolio import SatisfactionPortfolio

ENGINES = [
    CompleteSearch,
    RestartSearch,
    LnsSearch,
    PortfolioSearch,
    SatisfactionPortfolio,
    AdaptiveSearch,
    BucketSearch,
    BucketCount,
]


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.__name__)
def test_each_engine_has_the_interface_s_methods_with_its_parameters(engine):
    for name in ("run", "progress", "extra_stats", "stop"):
        ours = inspect.signature(getattr(engine, name))
        theirs = inspect.signature(getattr(Engine, name))
        assert list(ours.parameters) == list(theirs.parameters), (engine.__name__, name, ours)


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.__name__)
def test_each_engine_sets_runners_and_shares(engine):
    source = inspect.getsource(engine)
    for attribute in ("runners", "shares"):
        assert f"self.{attribute}" in source or f"def {attribute}" in source, (engine.__name__, attribute)


def test_the_run_chooses_engines_from_this_list():
    import fzn_gpu.engine as run_module

    source = inspect.getsource(run_module.SolveRun._make_engine)
    for engine in ENGINES:
        assert engine.__name__ in source, engine.__name__
