"""budget.fit_entries and budget.shorten on their own: whatever the entries, the result's JSON text
is within the budget, entries stay in order, and only what does not fit is cut."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from mcp_memory_server.mcp.budget import (
    MAX_NAMED,
    MIN_SHOWN_BYTES,
    budget_bytes,
    estimate_tokens,
    fit_entries,
    json_bytes,
    listing,
    shorten,
    to_json,
)

ALPHABET = 'abc xyz "quoted" \\ back\nslash\t é 東京 🙂 \x01'


def entry(rng: random.Random, i: int) -> dict[str, Any]:
    length = rng.choice([10, 100, 1000, 5000, 20000])
    content = "".join(rng.choice(ALPHABET) for _ in range(length))
    return {"id": f"{i:08d}-0000-4000-8000-000000000000", "content": content, "score": rng.random()}


def search_build(budget: int) -> Any:
    head = {"results": [], "count": 0, "held_back": 2}
    return listing(head, "results", count="count", budget=budget, noun="result", plural="results", how="ask")


@pytest.mark.parametrize("seed", range(40))
def test_any_entries_fit_in_order_and_only_what_does_not_fit_is_cut(seed: int) -> None:
    rng = random.Random(seed)
    entries = [entry(rng, i) for i in range(rng.randint(1, 60))]
    budget = rng.choice([1000, 1500, 3000, 8000, 20000])
    data = fit_entries(entries, search_build(budget), budget, name=lambda e: e["id"])
    text = to_json(data)
    assert len(text.encode()) <= budget_bytes(budget) and estimate_tokens(text) <= budget
    kept, omitted = data["results"], data.get("omitted", [])
    assert data["count"] == len(kept) and data["held_back"] == 2
    ids = [e["id"] for e in entries]
    assert [e["id"] for e in kept] == ids[: len(kept)]  # in order, from the best
    assert omitted == ids[len(kept) : len(kept) + MAX_NAMED]
    for given, got in zip(entries, kept, strict=False):
        if got.get("content_truncated"):
            assert got is kept[-1] and given["content"].startswith(got["content"])
            assert len(kept) == 1 or len(got["content"].encode()) >= MIN_SHOWN_BYTES // 6
        else:
            assert got == given
    if len(kept) < len(entries):
        left_out = len(entries) - len(kept)
        assert data["hint"].startswith(f"{left_out} more result")
        whole = [e for e in kept if not e.get("content_truncated")]
        bigger = fit_entries(entries[: len(whole) + 1], search_build(budget), 10**9)  # uncut
        rest = ids[len(whole) + 1 :]
        more = search_build(budget)(bigger["results"], rest[:MAX_NAMED], len(rest))
        assert json_bytes(more) > budget_bytes(budget)  # one more whole entry would not have fitted
    else:
        assert "hint" not in data and "omitted" not in data


def test_a_result_that_fits_is_returned_as_built() -> None:
    entries = [{"id": "a", "content": "short"}]
    assert fit_entries(entries, search_build(1000), 1000, name=lambda e: e["id"]) == {
        "results": entries,
        "count": 1,
        "held_back": 2,
    }


def test_shorten_keeps_the_start_within_the_room_and_marks_it() -> None:
    big = {"id": "x", "content": "é\n" * 5000, "metadata": {"k": "v"}}
    short = shorten(big, 1000)
    assert short is not None and json_bytes(short) <= 1000 and json_bytes(short) > 990
    assert big["content"].startswith(short["content"]) and short["content_truncated"] is True
    assert short["metadata"] == {"k": "v"}
    lean = shorten({**big, "metadata": {"notes": "n" * 2000}}, 500)  # the metadata goes too
    assert lean is not None and lean["metadata"] == {} and lean["metadata_truncated"] is True
    assert shorten(big, 10) is None
    assert json.loads(to_json(short)) == short
