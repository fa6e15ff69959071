"""Discord's rules for message components, as the fake Discord enforces them.

`component_errors(components, flags)` answers what Discord answers a message whose
`components` break a rule: the nested `errors` object of a 400 "Invalid Form Body"
(code 50035), keyed by the offending field's path (`components.0.components.1.custom_id`),
or `{}` when the components are valid. The rules (Discord's documentation of message
components):

- classic messages: at most 5 top-level components, each an action row (type 1);
- an action row holds 1 to 5 buttons (type 2), or exactly one select menu, nothing else;
- a button of styles 1-4 needs a `custom_id` of 1-100 characters and no `url`;
  a link button (style 5) needs a `url` and no `custom_id`; a premium button (style 6)
  a `sku_id` and neither; a `label` is at most 80 characters;
- every `custom_id` is unique within one message (disabled components included);
- a message flagged IS_COMPONENTS_V2 (1 << 15) may use the layout components (sections,
  text displays, containers ...) at the top level, at most 40 components in all.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

ACTION_ROW, BUTTON, TEXT_INPUT = 1, 2, 4
SELECTS = frozenset({3, 5, 6, 7, 8})
LINK, PREMIUM = 5, 6
EPHEMERAL = 1 << 6
IS_COMPONENTS_V2 = 1 << 15
# Layout components a components-v2 message may carry at its top level.
V2_TOP_LEVEL = frozenset({ACTION_ROW, 9, 10, 12, 13, 14, 17})
MAX_ROWS = 5
MAX_ROW_ITEMS = 5
MAX_CUSTOM_ID = 100
MAX_LABEL = 80
MAX_V2_COMPONENTS = 40


def invalid_form_body(errors: dict[str, Any]) -> dict[str, Any]:
    """Discord's 400 body for a request that breaks a field's rule."""
    return {"code": 50035, "message": "Invalid Form Body", "errors": errors}


def walk(components: Any) -> Iterator[dict[str, Any]]:
    """Every component, depth first: rows, their items, containers' and sections' children."""
    for component in components if isinstance(components, list) else []:
        if not isinstance(component, dict):
            continue
        yield component
        yield from walk(component.get("components"))
        accessory = component.get("accessory")
        if isinstance(accessory, dict):
            yield accessory


def buttons(components: Any) -> list[dict[str, Any]]:
    """The buttons (type 2) among `components`, in display order."""
    return [c for c in walk(components) if c.get("type") == BUTTON]


def component_errors(components: Any, flags: int = 0) -> dict[str, Any]:
    """The `errors` object Discord answers for these components, `{}` when they are valid."""
    errors: dict[str, Any] = {}
    path = ("components",)
    if not isinstance(components, list):
        _put(errors, path, "BASE_TYPE_ARRAY", "Must be an array.")
        return errors
    if flags & IS_COMPONENTS_V2:
        if sum(1 for _ in walk(components)) > MAX_V2_COMPONENTS:
            _put(errors, path, "BASE_TYPE_BAD_LENGTH", f"Must be {MAX_V2_COMPONENTS} or fewer in total.")
        allowed = V2_TOP_LEVEL
    else:
        if len(components) > MAX_ROWS:
            _put(errors, path, "BASE_TYPE_BAD_LENGTH", f"Must be {MAX_ROWS} or fewer in length.")
        allowed = frozenset({ACTION_ROW})
    seen: set[str] = set()
    for i, component in enumerate(components):
        here = (*path, str(i))
        if not isinstance(component, dict) or component.get("type") not in allowed:
            _put(errors, (*here, "type"), "BASE_TYPE_CHOICES",
                 f"Value must be one of {sorted(allowed)}.")
            continue
        _check_tree(component, here, errors, seen)
    return errors


def _check_tree(component: dict[str, Any], here: tuple[str, ...], errors: dict[str, Any], seen: set[str]) -> None:
    kind = component.get("type")
    if kind == ACTION_ROW:
        _check_row(component, here, errors, seen)
        return
    if kind == BUTTON:
        _check_button(component, here, errors, seen)
        return
    if kind in SELECTS:
        _check_custom_id(component, here, errors, seen)
        return
    children = component.get("components")
    for j, child in enumerate(children if isinstance(children, list) else []):
        if isinstance(child, dict):
            _check_tree(child, (*here, "components", str(j)), errors, seen)
    accessory = component.get("accessory")
    if isinstance(accessory, dict):
        _check_tree(accessory, (*here, "accessory"), errors, seen)


def _check_row(row: dict[str, Any], here: tuple[str, ...], errors: dict[str, Any], seen: set[str]) -> None:
    items = row.get("components")
    path = (*here, "components")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ROW_ITEMS:
        _put(errors, path, "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {MAX_ROW_ITEMS} in length.")
        if not isinstance(items, list):
            return
    kinds = [item.get("type") if isinstance(item, dict) else None for item in items]
    for j, (item, kind) in enumerate(zip(items, kinds, strict=True)):
        at = (*path, str(j))
        if kind == BUTTON:
            _check_button(item, at, errors, seen)
        elif kind in SELECTS:
            if len(items) > 1:
                _put(errors, at, "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                     "The specified component exceeds the maximum width")
            _check_custom_id(item, at, errors, seen)
        else:  # text inputs live in modals, rows do not nest
            _put(errors, (*at, "type"), "BASE_TYPE_CHOICES",
                 f"Value must be one of {sorted({BUTTON, *SELECTS})}.")


def _check_button(button: dict[str, Any], here: tuple[str, ...], errors: dict[str, Any], seen: set[str]) -> None:
    style = button.get("style")
    label = button.get("label")
    if isinstance(label, str) and len(label) > MAX_LABEL:
        _put(errors, (*here, "label"), "BASE_TYPE_MAX_LENGTH", f"Must be {MAX_LABEL} or fewer in length.")
    if style not in (1, 2, 3, 4, LINK, PREMIUM):
        _put(errors, (*here, "style"), "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6).")
        return
    if style == LINK:
        if not button.get("url"):
            _put(errors, (*here, "url"), "BUTTON_COMPONENT_URL_REQUIRED", "A url is required")
        if button.get("custom_id") is not None:
            _put(errors, (*here, "custom_id"), "BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE",
                 "A custom id and url cannot both be specified")
        return
    if style == PREMIUM:
        if not button.get("sku_id"):
            _put(errors, (*here, "sku_id"), "BUTTON_COMPONENT_SKU_ID_REQUIRED", "A sku id is required")
        for key in ("custom_id", "url", "label", "emoji"):
            if button.get(key) is not None:
                _put(errors, (*here, key), "BUTTON_COMPONENT_INVALID_FOR_PREMIUM",
                     f"A premium button cannot have a {key}")
        return
    if button.get("url") is not None:
        _put(errors, (*here, "url"), "BUTTON_COMPONENT_CUSTOM_ID_URL_MUTUALLY_EXCLUSIVE",
             "A custom id and url cannot both be specified")
    _check_custom_id(button, here, errors, seen)


def _check_custom_id(component: dict[str, Any], here: tuple[str, ...], errors: dict[str, Any],
                     seen: set[str]) -> None:
    custom_id = component.get("custom_id")
    at = (*here, "custom_id")
    if custom_id is None:
        _put(errors, at, "BUTTON_COMPONENT_CUSTOM_ID_REQUIRED", "A custom id is required")
    elif not isinstance(custom_id, str) or not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
        _put(errors, at, "BASE_TYPE_BAD_LENGTH", f"Must be between 1 and {MAX_CUSTOM_ID} in length.")
    elif custom_id in seen:
        _put(errors, at, "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id was already specified")
    else:
        seen.add(custom_id)


def _put(errors: dict[str, Any], path: tuple[str, ...], code: str, message: str) -> None:
    node = errors
    for key in path:
        node = node.setdefault(key, {})
    node.setdefault("_errors", []).append({"code": code, "message": message})


def nest(errors: dict[str, Any], *prefix: str) -> dict[str, Any]:
    """`errors` under `prefix` (an interaction callback's fields live under `data`)."""
    for key in reversed(prefix):
        errors = {key: errors}
    return errors
