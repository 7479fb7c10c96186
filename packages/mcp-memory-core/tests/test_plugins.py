"""The plugin manager: real entry points from real (temporary) distributions on sys.path."""

import sys
import textwrap
from pathlib import Path

import pytest

from mcp_memory_core import (
    PluginConflictError,
    PluginError,
    PluginManager,
    RankerSpec,
    RerankerSpec,
    TokenTableSpec,
    UnknownBackendError,
    hookimpl,
)
from mcp_memory_core.plugins import plugin_manager_from_settings

GOOD = """
from mcp_memory_core import RankerSpec, hookimpl

@hookimpl
def mcp_memory_rankers():
    yield RankerSpec(name={name!r}, factory=lambda settings: object(), description="test ranker")
"""


def make_dist(root: Path, package: str, entry_point: str, module: str, source: str) -> None:
    """Write a minimal installed distribution (dist-info + module) that importlib.metadata finds."""
    (root / f"{module}.py").write_text(textwrap.dedent(source))
    info = root / f"{package.replace('-', '_')}-1.2.3.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.2.3\n")
    (info / "entry_points.txt").write_text(f"[mcp_memory]\n{entry_point} = {module}\n")


@pytest.fixture
def site(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("tp_")]:
        del sys.modules[name]


def test_entry_point_plugin_is_found_with_its_package(site):
    make_dist(site, "tp-good", "tp-good", "tp_good", GOOD.format(name="tp-ranker"))
    pm = plugin_manager_from_settings()
    assert isinstance(pm.ranker("tp-ranker"), RankerSpec)
    row = next(b for b in pm.backends() if b.name == "tp-ranker")
    assert (row.kind, row.package, row.version) == ("ranker", "tp-good", "1.2.3")


def test_broken_plugin_is_reported_not_fatal(site, caplog):
    make_dist(site, "tp-broken", "tp-broken", "tp_broken", "raise ImportError('missing dependency xyz')")
    make_dist(site, "tp-fine", "tp-fine", "tp_fine", GOOD.format(name="tp-fine-ranker"))
    pm = plugin_manager_from_settings()
    assert "tp-fine-ranker" in pm.names("ranker")
    failure = next(f for f in pm.failures if f.entry_point == "tp-broken")
    assert failure.package == "tp-broken" and "missing dependency xyz" in failure.error
    assert "tp-broken" in caplog.text


def test_strict_mode_raises_on_broken_plugin(site):
    make_dist(site, "tp-broken", "tp-broken", "tp_broken", "raise RuntimeError('boom')")
    with pytest.raises(PluginError, match=r"tp-broken.*boom"):
        plugin_manager_from_settings(strict=True)


def test_conflicting_names_name_both_packages(site):
    make_dist(site, "tp-one", "tp-one", "tp_one", GOOD.format(name="clash"))
    make_dist(site, "tp-two", "tp-two", "tp_two", GOOD.format(name="clash"))
    pm = plugin_manager_from_settings()
    with pytest.raises(PluginConflictError, match=r"'clash'.*tp-one, tp-two"):
        pm.ranker("clash")


def test_disable_list_skips_plugins(site):
    make_dist(site, "tp-one", "tp-one", "tp_one", GOOD.format(name="clash"))
    make_dist(site, "tp-two", "tp-two", "tp_two", GOOD.format(name="clash"))
    pm = plugin_manager_from_settings(disabled="tp-two")
    assert pm.ranker("clash")  # no conflict once one is disabled
    assert plugin_manager_from_settings(disabled="*").backends() == []


def test_unknown_name_lists_choices():
    pm = PluginManager()

    @hookimpl
    def mcp_memory_rankers():
        yield RankerSpec(name="alpha", factory=lambda s: object())
        yield RankerSpec(name="beta", factory=lambda s: object())

    pm.register(type("P", (), {"mcp_memory_rankers": staticmethod(mcp_memory_rankers)}), name="p")
    with pytest.raises(UnknownBackendError, match=r"'gamma' is not recognized\. Choose one of: alpha, beta"):
        pm.ranker("gamma")
    assert pm.ranker("ALPHA").name == "alpha"


def test_hook_yielding_the_wrong_spec_type_is_an_error():
    from mcp_memory_core import StoreSpec

    pm = PluginManager()

    @hookimpl
    def mcp_memory_rankers():
        yield StoreSpec(name="oops", factory=lambda s: object())

    pm.register(type("P", (), {"mcp_memory_rankers": staticmethod(mcp_memory_rankers)}), name="wrong")
    with pytest.raises(PluginError, match="expected RankerSpec"):
        pm.names("ranker")


def test_unknown_hook_name_is_caught_at_registration():
    pm = PluginManager()

    @hookimpl
    def mcp_memory_rankerz():  # typo
        return []

    with pytest.raises(Exception, match="mcp_memory_rankerz"):
        pm.register(type("P", (), {"mcp_memory_rankerz": staticmethod(mcp_memory_rankerz)}), name="typo")


@pytest.mark.parametrize("bad", ["", "Upper", "has space", "1starts-with-digit", "x" * 65])
def test_spec_names_are_validated(bad):
    with pytest.raises(ValueError, match="Invalid ranker name"):
        RankerSpec(name=bad, factory=lambda s: object())


def test_every_hookspec_has_a_runnable_example():
    from mcp_memory_core import hookspecs

    names = [name for name in dir(hookspecs) if name.startswith("mcp_memory_")]
    assert names == [
        "mcp_memory_embedders",
        "mcp_memory_rankers",
        "mcp_memory_rerankers",
        "mcp_memory_stores",
        "mcp_memory_token_tables",
    ]
    for name in names:
        doc = getattr(hookspecs, name).__doc__
        assert "Example::" in doc and "@hookimpl" in doc, name


RERANKER = """
from mcp_memory_core import RerankerSpec, hookimpl

@hookimpl
def mcp_memory_rerankers():
    yield RerankerSpec(name="tp-phrases", factory=lambda settings: object(), description="test reranker")
"""


def test_a_reranker_plugin_is_found_by_kind_and_listed(site):
    make_dist(site, "tp-rerank", "tp-rerank", "tp_rerank", RERANKER)
    pm = plugin_manager_from_settings()
    assert isinstance(pm.reranker("tp-phrases"), RerankerSpec)
    assert "tp-phrases" in pm.names("reranker") and "tp-phrases" not in pm.names("ranker")
    row = next(b for b in pm.backends() if b.name == "tp-phrases")
    assert (row.kind, row.package, row.version, row.description) == (
        "reranker",
        "tp-rerank",
        "1.2.3",
        "test reranker",
    )
    with pytest.raises(
        UnknownBackendError, match=r"The reranker 'tp-phrase' is not recognized\. Choose one of: .*tp-phrases"
    ):
        pm.reranker("tp-phrase")


def test_an_unknown_reranker_with_none_installed_says_so():
    with pytest.raises(
        UnknownBackendError, match=r"reranker 'cross' is not recognized\. Choose one of: \(none installed\)"
    ):
        PluginManager().reranker("cross")


TOKEN_TABLE = """
from mcp_memory_core import TokenTableSpec, hookimpl

@hookimpl
def mcp_memory_token_tables():
    yield TokenTableSpec(name="tp-store", factory=lambda settings: object(), description="tokens beside it")
"""


def test_a_token_table_plugin_is_found_by_its_store_name(site):
    make_dist(site, "tp-tokens", "tp-tokens", "tp_tokens", TOKEN_TABLE)
    pm = plugin_manager_from_settings()
    spec = pm.token_table("TP-Store ")
    assert isinstance(spec, TokenTableSpec) and spec.description == "tokens beside it"
    assert pm.token_table("sqlite-vec") is None  # no table: the server keeps its token file
    row = next(b for b in pm.backends() if b.kind == "token-table" and b.name == "tp-store")
    assert (row.package, row.version) == ("tp-tokens", "1.2.3")
    make_dist(site, "tp-tokens-two", "tp-tokens-two", "tp_tokens_two", TOKEN_TABLE)
    with pytest.raises(PluginConflictError, match=r"token-table name 'tp-store'.*tp-tokens, tp-tokens-two"):
        plugin_manager_from_settings().token_table("tp-store")
