"""Filters are parsed once for every surface: the MCP tools' arguments and the web UI's form become one
FilterRequest, and the engine's words refuse a bad value."""

from __future__ import annotations

import pytest

from mcp_memory_core.errors import InvalidInputError
from mcp_memory_server.operations.filters import FilterRequest, day_after
from mcp_memory_server.web import routes


def test_a_filter_request_becomes_the_engines_filters():
    filters = FilterRequest(
        types=["episodic"], tags=["tea"], tags_match="all", created_after="2026-01-01", thread="t1"
    ).parse()
    assert {str(t) for t in filters.types} == {"episodic"}
    assert filters.tags == ("tea",) and filters.tags_match == "all" and filters.thread == "t1"
    assert filters.created_after.isoformat().startswith("2026-01-01")


def test_a_bad_value_is_refused_in_the_engines_words():
    with pytest.raises(InvalidInputError, match="tags_match must be 'any' or 'all'"):
        FilterRequest(tags_match="some").parse()


def test_no_filter_is_the_engines_no_filters():
    from mcp_memory_core.filters import NO_FILTERS

    assert FilterRequest().parse() == NO_FILTERS


def test_a_forms_to_date_includes_its_day_and_other_text_reaches_the_engine_as_it_is():
    assert day_after("2026-01-31") == "2026-02-01"
    assert day_after("yesterday") == "yesterday"


def test_the_web_form_and_the_tool_arguments_give_the_same_filters():
    form = {"namespace": "", "type": "episodic", "tags": "tea, drinks", "created_after": "2026-01-01"}
    from_form = routes._filters({**form, "created_before": "", "pinned": ""}).parse()
    from_tool = FilterRequest(types=["episodic"], tags=["tea", "drinks"], created_after="2026-01-01").parse()
    assert from_form == from_tool
