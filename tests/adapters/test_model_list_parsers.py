"""The pure readers of each family's model list (`providers/<family>/model_list.py`).

A body in the documented shape gives its models; any other JSON gives a ModelListError,
never another exception (fuzzed); a body cut anywhere gives a prefix of the whole list's
models, each one whole, and no next page.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from providers.anthropic_native import model_list as anthropic
from providers.gemini import model_list as gemini
from providers.model_list import ListedModel, ModelListError, ModelPage, decode_page
from providers.openai_compat import model_list as openai_style
from tests.support.fake_model_lists import (
    AnthropicModels,
    GeminiModels,
    OpenAIModels,
    OpenRouterModels,
)

PARSERS = {"openai_style": openai_style.page_of, "anthropic": anthropic.page_of, "gemini": gemini.page_of}

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["data", "models", "id", "name", "has_more", "last_id", "nextPageToken", "lifecycle",
                         "supportedGenerationMethods", "supported_parameters", "x"]), inner, max_size=5),
    max_leaves=20,
)


def _body(listing, path: str, query: dict[str, str] | None = None) -> bytes:
    return listing.page(path, query or {}).body


def test_openai_style_reads_ids_and_openrouters_parameters():
    page = openai_style.page_of(json.loads(_body(OpenAIModels(["a", "b"]), "/v1/models")), False)
    assert page == ModelPage((ListedModel("a"), ListedModel("b")))
    routed = OpenRouterModels({"x/y": ["tools"], "x/z": []})
    page = openai_style.page_of(json.loads(_body(routed, "/api/v1/models")), False)
    assert page == ModelPage((ListedModel("x/y", frozenset({"tools"})), ListedModel("x/z", frozenset())))


def test_anthropic_leaves_out_retired_models_and_follows_has_more():
    listing = AnthropicModels(["claude-new", "claude-old", "claude-gone"], retired=frozenset({"claude-gone"}))
    every = json.loads(_body(listing, "/v1/models", {"limit": "2", "lifecycle": "retired"}))
    assert anthropic.page_of(every, False) == ModelPage((ListedModel("claude-new"), ListedModel("claude-old")),
                                                        "claude-old")
    rest = json.loads(_body(listing, "/v1/models", {"limit": "2", "after_id": "claude-old", "lifecycle": "retired"}))
    assert anthropic.page_of(rest, False) == ModelPage(())


def test_gemini_keeps_chat_models_by_short_name_and_reads_an_empty_page():
    listing = GeminiModels({"gemini-3-flash": ["generateContent"], "text-embedding-004": ["embedContent"]})
    assert gemini.page_of(json.loads(_body(listing, "/v1beta/models")), False) == ModelPage(
        (ListedModel("gemini-3-flash"),))
    assert gemini.page_of({}, False) == ModelPage(())


@pytest.mark.parametrize("body", [[], "list", {"data": {"id": "a"}}, {"object": "list"}])
def test_openai_style_refuses_what_is_not_a_list_object(body):
    with pytest.raises(ModelListError):
        openai_style.page_of(body, False)


def test_ids_that_cannot_be_model_names_are_skipped():
    body = {"data": [{"id": ""}, {"id": "has space"}, {"id": 7}, {"id": "x" * 300}, {"id": " ok "}, "junk"]}
    assert openai_style.page_of(body, False) == ModelPage((ListedModel("ok"),))


@pytest.mark.parametrize("name", sorted(PARSERS))
@settings(max_examples=300, deadline=None)
@given(body=JSON_VALUES, cut=st.booleans())
def test_any_json_is_read_or_refused_clearly(name, body, cut):
    try:
        page = PARSERS[name](body, cut)
    except ModelListError:
        return
    assert isinstance(page, ModelPage)
    assert all(isinstance(m.id, str) and m.id for m in page.models)
    assert page.next is None or isinstance(page.next, str)


LISTS = {
    "openai_style": (OpenRouterModels({f"v/m-{n}": ["tools", f"p{n}"] for n in range(6)}), "/api/v1/models", {}),
    "anthropic": (AnthropicModels([f"claude-{n}" for n in range(6)]), "/v1/models", {"limit": "4"}),
    "gemini": (GeminiModels({f"gemini-{n}": ["generateContent"] for n in range(6)}), "/v1beta/models",
               {"pageSize": "4"}),
}


@pytest.mark.parametrize("name", sorted(LISTS))
def test_a_body_cut_anywhere_gives_whole_models_from_the_start_and_no_next_page(name):
    listing, path, query = LISTS[name]
    body = _body(listing, path, query)
    whole = PARSERS[name](decode_page(body, False), False)
    for end in range(len(body)):
        try:
            page = PARSERS[name](decode_page(body[:end], True), True)
        except ModelListError:
            continue  # too little to be an object yet
        assert page.models == whole.models[:len(page.models)]
        assert page.next is None
