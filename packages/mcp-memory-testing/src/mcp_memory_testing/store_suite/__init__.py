"""StoreConformance: what every store must do. Subclass it and provide a ``store`` fixture.

Example::

    import pytest
    from mcp_memory_testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self, tmp_path):
            return MyStore(tmp_path / "memories.db")   # EMPTY and NOT opened: the suite opens it

        def reopen_store(self, store):                 # optional: a fresh instance on the same data
            return MyStore(store.location)

The suite opens the store with ``model_id`` / ``dimensions`` (class attributes) and closes it after each
test. Keyword tests are skipped when ``store.capabilities.keyword_search`` is false. Vectors are plain
numpy unit vectors from a fixed-seed RNG, so results are deterministic and checked against numpy.

The tests are grouped by capability, one module each (``basics``, ``writes``, ``transactions``,
``concurrency``, ``knn``, ``keyword``, ``listing``, ``passages``, ``filters``, ``threads``, ``scope``,
``reembed``, ``passage_backlog``); ``base`` holds the fixtures and helpers they share, ``data`` the vectors and memories.
"""

from __future__ import annotations

from .basics import BasicsTests
from .concurrency import ConcurrencyTests
from .data import ALL, BASE_TIME, SEARCH, memory, near, unit_vectors
from .filters import FilterTests
from .keyword import FTS_HOSTILE_QUERIES, KeywordTests
from .knn import KnnTests
from .listing import ListingTests
from .passage_backlog import PassageBacklogTests
from .passages import PassageTests
from .reembed import ReembedTests
from .scope import ScopeTests
from .threads import ThreadTests
from .transactions import TransactionTests
from .writes import WriteTests


# pytest runs a base class's tests before a subclass's, the last base first: the groups are listed from
# the last to run to the first, so a broken store fails on its basics before anything built on them.
class StoreConformance(
    PassageBacklogTests,
    ReembedTests,
    ScopeTests,
    ThreadTests,
    FilterTests,
    PassageTests,
    ListingTests,
    KeywordTests,
    KnnTests,
    ConcurrencyTests,
    TransactionTests,
    WriteTests,
    BasicsTests,
):
    """Subclass and override the ``store`` fixture to return an EMPTY, un-opened store.

    Override ``reopen_store`` if your store can be re-created from its location (a file, a DSN): the
    persistence tests then check that data survives a new instance, not only close()/open().
    """


StoreConformance._suite = StoreConformance

__all__ = [
    "ALL",
    "BASE_TIME",
    "FTS_HOSTILE_QUERIES",
    "SEARCH",
    "StoreConformance",
    "memory",
    "near",
    "unit_vectors",
]
