"""Locating the shared corpus. It stays outside the repo; tests skip with a reason without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_REPO = Path(__file__).resolve().parents[2]


def corpus_dir() -> Path | None:
    candidates = [os.environ.get("CORPUS_DIR"), str(_REPO.parent / "shared" / "corpus")]
    for candidate in candidates:
        if candidate and Path(candidate, "SOURCES.md").is_file():
            return Path(candidate)
    return None


CORPUS = corpus_dir()
requires_corpus = pytest.mark.skipif(
    CORPUS is None, reason="corpus not found at ../shared/corpus and CORPUS_DIR is unset"
)


def corpus_streams(provider_dir: str) -> list[str]:
    """Names like 'openai/chat_text_2024' for every stream of a provider folder."""
    if CORPUS is None:
        return []
    return sorted(f"{provider_dir}/{p.stem}" for p in (CORPUS / provider_dir).glob("*.sse"))


def corpus_errors(prefix: str = "") -> list[str]:
    if CORPUS is None:
        return []
    return sorted(f"errors/{p.stem}" for p in (CORPUS / "errors").glob(f"{prefix}*.json"))
