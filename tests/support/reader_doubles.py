"""Readers the tests hand the reader pool by import path (a reader process imports them):
slow, greedy or telling which process ran them."""

from __future__ import annotations

import os
import signal
import time


def page_pid(markup: bytes | str) -> tuple[str | None, str]:
    """A page's "title" is the process that extracted it."""
    return str(os.getpid()), "extracted text"


def slow_page(markup: bytes | str) -> tuple[str | None, str]:
    time.sleep(5)  # never checks a deadline
    return "late", "late text"


def stuck_document(data: bytes, filename: str, deadline: float) -> str:
    time.sleep(3600)  # never checks its deadline
    return filename


def greedy_document(data: bytes, filename: str, deadline: float) -> str:
    """Allocates far past any reader's memory cap."""
    hoard = [bytearray(64 * 1024 * 1024) for _ in range(64)]  # 4 GiB
    return str(len(hoard))


def process_of(data: bytes, filename: str, deadline: float) -> int:
    return os.getpid()


def environment_names(data: bytes, filename: str, deadline: float) -> list[str]:
    return sorted(os.environ)


def crashing_document(data: bytes, filename: str, deadline: float) -> str:
    """Dies as a reader's native code would on a bad file."""
    os.kill(os.getpid(), signal.SIGSEGV)
    return filename


class OddLibraryError(Exception):
    """What a parsing library raises that no reader expected (pypdf's DeprecationError, say)."""


def failing_document(data: bytes, filename: str, deadline: float) -> str:
    raise OddLibraryError(filename)
