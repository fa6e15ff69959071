"""Rules J1-J7: the truncated tool-argument repair."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY

from providers.text.json_repair import parse_tool_arguments, try_repair_incomplete_json

CASES = [
    # J1: contract
    ("", None),
    ("   \n\t", None),
    ("[1, 2", None),  # root must be an object
    ('"abc', None),
    ('{"a": 1}', None),  # already complete
    ('{"a": 1}  \n', None),  # complete with trailing whitespace
    ("{}", None),
    ("{", {}),
    ("  {", {}),
    # J2: malformed is refused whole
    ('{"a": 1 "b": 2', None),  # value where a separator is due
    ('{"a": 1]', None),  # wrong closer
    ('{"a": 1}}', None),  # extra closer
    ('{"a": 1} x', None),  # junk after the root closed
    ('{"a" 1', None),  # missing colon
    ('{"a": tru,', None),
    ('{"a": yes', None),  # bare word
    ('{"a": 1,,', None),
    ('{"a": 01', None),  # leading zero
    ('{"a": 01, "b": 2', None),
    ('{"a": trux', None),  # diverging literal
    ('{"a": nul1', None),
    ('{"a": "x\\q", "b": 1', None),  # complete string with an invalid escape
    ('{"a": "\\u12x', None),
    ('{"a": 7. ', None),  # incomplete number followed by whitespace
    ('{"a": 7.,', None),
    ('{"a": -,', None),
    ('{"a": 1e}', None),
    ('{"a": +1', None),
    ('{"a": .5', None),
    ('{"a": 1,}', None),
    ("{'a': 1", None),
    ('{"a": "x\x01', None),  # raw control character in a string
    ('{"a": [1,]', None),
    ('{"a": [1 2', None),
    ('{1: 2', None),
    # J3: what counts as cut
    ('{"a": 1, "b": "unterminated', {"a": 1}),
    ('{"a": 1, "b": "ends in escape \\', {"a": 1}),
    ('{"a": 1, "b": "half unicode \\u00', {"a": 1}),
    ('{"a": 1, "b": tr', {"a": 1}),
    ('{"a": 1, "b": fals', {"a": 1}),
    ('{"a": 1, "b": n', {"a": 1}),
    ('{"a": 1, "b": -', {"a": 1}),
    ('{"a": 1, "b": 7.', {"a": 1}),
    ('{"a": 1, "b": 2e', {"a": 1}),
    ('{"a": 1, "b": 1.5E-', {"a": 1}),
    ('{"a": 1, "b": 1234', {"a": 1}),  # may be cut out of 12345
    ('{"a": 1, "b": 1234  ', {"a": 1}),  # trailing whitespace proves nothing
    ('{"a": 1, "b": 1234 \n', {"a": 1}),
    ('{"a": 1, "b": "done"', {"a": 1, "b": "done"}),  # string complete at the end
    ('{"a": 1, "b": true', {"a": 1, "b": True}),
    ('{"a": 1, "b": null  ', {"a": 1, "b": None}),
    ('{"a": 1, "unterminated key', {"a": 1}),
    # J4: dropping with the key, back to the last complete entry
    ('{"a": 1, "b": 2.', {"a": 1}),
    ('{"a": 1, "b"', {"a": 1}),
    ('{"a": 1, "b":', {"a": 1}),
    ('{"a": 1, "b": ', {"a": 1}),
    ('{"a": 1,', {"a": 1}),
    ('{"a": 1, ', {"a": 1}),
    ('{"a": [1, 2, 3', {"a": [1, 2]}),
    ('{"a": [1, 2, 3,', {"a": [1, 2, 3]}),
    ('{"a": ["x", "y', {"a": ["x"]}),
    # J5: closing, empty nested containers are cut too
    ('{"id": 4, "tags": ["x', {"id": 4}),
    ('{"id": 4, "tags": [', {"id": 4}),
    ('{"id": 4, "o": {', {"id": 4}),
    ('{"id": 4, "o": {"k"', {"id": 4}),
    ('{"id": 4, "o": {"k": [[', {"id": 4}),
    ('{"o": {"k": 1, "j": [', {"o": {"k": 1}}),
    ('{"a": {}, "b": [', {"a": {}}),  # a complete empty container is kept
    ('{"a": [], "b": {"c": [], "d": 4', {"a": [], "b": {"c": []}}),
    ('{"a": [{"b": 1, "c', {"a": [{"b": 1}]}),
    ('{"a": [[1, 2], [3', {"a": [[1, 2]]}),
    ('{"a": [1, {"b": 1}', {"a": [1, {"b": 1}]}),
    ('{"a": {"b": {"c": "d"', {"a": {"b": {"c": "d"}}}),
    ('{"cut', {}),
    ('{"a": "x', {}),
    # J6: values decoded exactly as JSON decodes them
    ('{"s": "tab\\tquote\\"\\u00e9\\ud83d\\ude00", "n": 1e3, "m": -0.5, "x": 9',
     {"s": 'tab\tquote"\u00e9\U0001F600', "n": 1000.0, "m": -0.5}),
    ('{"a": 1, "a": 2, "b', {"a": 2}),
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_repair_table(raw, expected):
    result = try_repair_incomplete_json(raw)
    assert result == expected
    if expected is not None:
        assert type(result) is dict


def test_repair_keeps_key_order_and_types():
    result = try_repair_incomplete_json('{"z": 1, "a": [true, false, null], "m": {"k": "v"}, "c": 3')
    assert list(result) == ["z", "a", "m"]
    assert result["a"] == [True, False, None]


def test_repair_handles_deep_nesting_without_recursion_error():
    raw = '{"a": ' + "[" * 5000 + "1, 2"
    # Only the innermost array has a complete entry; the result must parse or be refused.
    result = try_repair_incomplete_json(raw)
    assert result is None or isinstance(result, dict)


@pytest.mark.parametrize(
    ("raw", "args", "parsed", "truncated"),
    [
        ("", {}, False, False),
        ("  \n", {}, False, False),
        ('{"q": "cats"}', {"q": "cats"}, True, False),
        ("{}", {}, True, False),
        ("[1, 2]", {}, False, False),
        ('"text"', {}, False, False),
        ("42", {}, False, False),
        ('{"q": "cats", "n": 3, "note": "cut he', {"q": "cats", "n": 3}, False, True),
        ('{"q": "cats" "n": 3', {}, False, False),
        ("not json at all", {}, False, False),
    ],
)
def test_parse_tool_arguments_table(raw, args, parsed, truncated):
    result = parse_tool_arguments(raw, adapter="openai", tool_name="search")
    assert (result.args, result.parsed, result.truncated) == (args, parsed, truncated)


def _counter(provider: str) -> float:
    value = REGISTRY.get_sample_value("tool_arguments_truncated_total", {"provider": provider})
    return value or 0.0


def test_repair_counts_metric_and_logs_without_the_payload(caplog):
    secret = "SECRET-PAYLOAD-VALUE"
    before = _counter("custom")
    with caplog.at_level(logging.ERROR, logger="providers.text.json_repair"):
        result = parse_tool_arguments(
            '{"keep": 1, "token": "' + secret, adapter="custom", tool_name="t_metric"
        )
    assert result.truncated and result.args == {"keep": 1}
    assert _counter("custom") == before + 1
    records = [r for r in caplog.records if r.name == "providers.text.json_repair"]
    assert len(records) == 1 and records[0].levelno == logging.ERROR
    message = records[0].getMessage()
    assert secret not in message and "keep" not in message
    assert "recovered_keys=1" in message and "custom" in message and "t_metric" in message
    raw_length = len('{"keep": 1, "token": "' + secret)
    assert records[0].tool_arguments_truncated == {
        "adapter": "custom", "tool": "t_metric", "recovered_keys": 1, "raw_length": raw_length
    }


def test_refusal_logs_error_and_counts_nothing(caplog):
    before = _counter("custom")
    with caplog.at_level(logging.ERROR, logger="providers.text.json_repair"):
        result = parse_tool_arguments('{"a": 1 "SECRET": 2', adapter="custom", tool_name="t_refused")
    assert (result.args, result.parsed, result.truncated) == ({}, False, False)
    assert _counter("custom") == before
    records = [r for r in caplog.records if r.name == "providers.text.json_repair"]
    assert len(records) == 1 and records[0].levelno == logging.ERROR
    assert "SECRET" not in records[0].getMessage()


def test_parsed_payload_logs_nothing(caplog):
    with caplog.at_level(logging.DEBUG, logger="providers.text.json_repair"):
        parse_tool_arguments('{"a": 1}', adapter="x", tool_name="y")
    assert not [r for r in caplog.records if r.name == "providers.text.json_repair"]


# ---- properties -------------------------------------------------------------------------

_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)
_objects = st.dictionaries(st.text(max_size=6), _values, max_size=5)
_dump_styles = st.sampled_from(
    [
        {},
        {"separators": (",", ":")},
        {"indent": 2},
        {"ensure_ascii": False},
        {"indent": "\t", "ensure_ascii": False},
    ]
)


def _is_sub(result, original) -> bool:
    """True when `result` is made only of complete entries of `original` (J4/J5).

    Entries are a prefix of the original's entries; all but the last are equal, and the
    last is equal or a non-empty sub-container of the original's value (the cut path).
    """
    if isinstance(original, dict):
        if not isinstance(result, dict):
            return False
        items, orig_items = list(result.items()), list(original.items())
    elif isinstance(original, list):
        if not isinstance(result, list):
            return False
        items, orig_items = list(enumerate(result)), list(enumerate(original))
    else:
        return False
    if len(items) > len(orig_items):
        return False
    for position, (key, value) in enumerate(items):
        orig_key, orig_value = orig_items[position]
        if key != orig_key:
            return False
        if value == orig_value and type(value) is type(orig_value):
            continue
        is_last = position == len(items) - 1
        if not (is_last and isinstance(value, dict | list) and value and _is_sub(value, orig_value)):
            return False
    return True


@settings(max_examples=250, deadline=None)
@given(_objects, _dump_styles)
def test_every_prefix_repairs_to_a_sub_object(obj, style):
    text = json.dumps(obj, **style)
    for cut in range(len(text) + 1):
        prefix = text[:cut]
        result = try_repair_incomplete_json(prefix)
        if cut == len(text) or not prefix.strip():
            assert result is None  # complete input, or nothing at all
            continue
        # A prefix of a valid object is truncated, never malformed: it must be repaired.
        assert result is not None, prefix
        assert _is_sub(result, obj), (prefix, result)
        # Never invents: the repaired text re-encodes to entries present in the input.
        assert set(result) <= set(obj)


@settings(max_examples=250, deadline=None)
@given(_objects, _dump_styles, st.data())
def test_prefix_plus_whitespace_never_keeps_a_trailing_number(obj, style, data):
    text = json.dumps(obj, **style)
    cut = data.draw(st.integers(min_value=1, max_value=max(1, len(text) - 1)))
    prefix = text[:cut] + data.draw(st.sampled_from(["", " ", "\n", "\t \r\n"]))
    result = try_repair_incomplete_json(prefix)
    if result is not None:
        assert _is_sub(result, obj)


_json_alphabet = st.sampled_from(list('{}[]:,"\\ -+.0123456789eEtrufalsn xq\u00e9\n'))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_json_alphabet, max_size=60))
def test_fuzz_broken_json_never_raises(raw):
    result = try_repair_incomplete_json(raw)
    assert result is None or type(result) is dict
    if result is not None:
        # A repair only ever happens to input that does not parse as it stands.
        with pytest.raises(ValueError):
            json.loads(raw)
    parsed = parse_tool_arguments(raw)
    assert type(parsed.args) is dict


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_fuzz_random_text_never_raises(raw):
    result = try_repair_incomplete_json("{" + raw)
    assert result is None or type(result) is dict
    assert try_repair_incomplete_json(raw) is None or raw.lstrip().startswith("{")


def test_a_thousand_tool_names_make_no_new_series():
    """The model picks tool names: they never become metric label values."""
    def series() -> int:
        return sum(len(m.samples) for m in REGISTRY.collect() if m.name == "tool_arguments_truncated")

    parse_tool_arguments('{"a": 1, "b": "cut', adapter="custom", tool_name="warm-up")
    before = series()
    for i in range(1000):
        parse_tool_arguments('{"a": 1, "b": "cut', adapter="custom", tool_name=f"tool-{i}-" + "x" * 50)
    assert series() == before
