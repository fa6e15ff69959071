"""The decode's memory bound and its budget: `decode_cost` against a fresh process's real
peak, JPEG drafting, the refusal from the header, and the first-come budget."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from bot.capabilities.reading.attachment_files import (
    DECODE_BUDGET_BYTES,
    MAX_LONG_SIDE,
    UnreadableFile,
    open_image,
)
from bot.capabilities.reading.images import ByteBudget, decode_image
from tests.capabilities.reading.attachments.test_decode_off_loop import encoded
from tests.support.in_thread import prepare_image

ROOT = Path(__file__).resolve().parents[4]


def test_a_webp_of_2000_pixels_a_side_is_as_large_as_one_decode_may_be() -> None:
    """The WebPs `test_decode_off_loop` decodes four of are each near the whole budget."""
    opened = open_image(encoded(2000, 2000, "WEBP", lossless=True))
    opened.image.close()
    assert 0.9 * DECODE_BUDGET_BYTES < opened.cost <= DECODE_BUDGET_BYTES


def peak_of(path: Path) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-m", "tests.capabilities.reading.attachments.decode_peak", str(path)], cwd=ROOT,
                          check=True, timeout=120, capture_output=True, text=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("name,width,height,fmt,mode,save", [
    ("lossless.webp", 2000, 2000, "WEBP", "RGB", {"lossless": True}),
    ("alpha.webp", 1800, 1800, "WEBP", "RGBA", {"quality": 80}),
    ("screenshot.png", 3840, 2160, "PNG", "RGB", {}),
    ("alpha.png", 3000, 2000, "PNG", "RGBA", {}),
    ("palette.png", 3600, 2700, "PNG", "P", {}),
    ("anim.gif", 3600, 2700, "GIF", "P", {}),
    ("undraftable.jpg", 3135, 3135, "JPEG", "RGB", {}),
    ("photo.jpg", 7000, 5000, "JPEG", "RGB", {}),
    ("progressive.jpg", 5000, 3750, "JPEG", "RGB", {"progressive": True}),
    ("full_chroma.jpg", 3600, 2700, "JPEG", "RGB", {"progressive": True, "subsampling": 0}),
])
def test_decode_cost_bounds_the_real_peak_memory(tmp_path: Path, name: str, width: int, height: int,
                                                 fmt: str, mode: str, save: dict[str, Any]) -> None:
    """What the budget is charged is at least what decoding holds, and not far above it."""
    color = 7 if mode == "P" else (10, 120, 200, 255)[:len(mode)]
    path = tmp_path / name
    path.write_bytes(encoded(width, height, fmt, mode, color, **save))
    measured = peak_of(path)
    assert measured["peak"] <= measured["cost"] <= DECODE_BUDGET_BYTES, measured
    # and it does not refuse for nothing: charged at most a quarter of the budget too much
    assert measured["cost"] - measured["peak"] < DECODE_BUDGET_BYTES / 4, measured


def test_a_huge_webp_is_refused_from_its_header_and_a_huge_jpeg_is_drafted() -> None:
    with pytest.raises(UnreadableFile) as caught:
        open_image(encoded(6324, 6324, "WEBP", lossless=True))
    assert caught.value.reason == "too_large" and caught.value.megapixels == 4
    opened = open_image(encoded(6324, 6324, "JPEG"))
    with opened.image:
        assert opened.image.size == (1581, 1581)  # decoded at a quarter: 2.5 megapixels, not 40
        assert opened.cost < 50 * 1024 * 1024  # whole, it would hold 160 MB before any resizing
    assert Image.open(io.BytesIO(prepare_image(encoded(6324, 6324, "JPEG")).data)).size == (MAX_LONG_SIDE,) * 2


def test_a_progressive_jpeg_is_charged_its_coefficients() -> None:
    baseline = open_image(encoded(4000, 3000, "JPEG"))
    progressive = open_image(encoded(4000, 3000, "JPEG", progressive=True))
    for opened in (baseline, progressive):
        opened.image.close()
    # libjpeg keeps every DCT coefficient of a progressive image, 2 bytes each (1.5 a pixel
    # with 4:2:0 chroma), next to the drafted image it decodes into.
    loading = 2000 * 1500 * 4 + 4000 * 3000 * 3
    assert baseline.cost < loading <= progressive.cost


def test_a_large_turned_photo_is_downscaled_and_upright() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    image = Image.new("RGB", (3000, 1000), (0, 0, 255))
    image.paste((255, 0, 0), (0, 0, 100, 1000))  # the left edge red: the top once upright
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes())
    part = prepare_image(out.getvalue())
    upright = Image.open(io.BytesIO(part.data))
    assert upright.size == (523, 1568)
    red, green, blue = upright.getpixel((260, 5))
    assert red > 200 and blue < 60
    red, green, blue = upright.getpixel((260, 1500))
    assert blue > 200 and red < 60


async def test_decode_image_gives_the_same_part_and_its_share_back() -> None:
    budget = ByteBudget(DECODE_BUDGET_BYTES)
    data = encoded(3000, 2000, "PNG")
    part = await decode_image(data, budget)
    assert part == prepare_image(data)
    with pytest.raises(UnreadableFile):
        await decode_image(encoded(6324, 6324, "WEBP", lossless=True), budget)
    with pytest.raises(UnreadableFile):
        await decode_image(b"not an image", budget)
    assert budget.free == budget.total


async def test_decodes_over_the_budget_wait_their_turn_in_order() -> None:
    budget = ByteBudget(100)
    await budget.reserve(60)
    order: list[str] = []

    async def take(name: str, amount: int) -> None:
        await budget.reserve(amount)
        order.append(name)

    large = asyncio.create_task(take("large", 50))
    small = asyncio.create_task(take("small", 10))  # it fits, but it came after the large one
    gone = asyncio.create_task(take("gone", 30))
    await asyncio.sleep(0.01)
    assert order == [] and budget.free == 40
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    budget.release(60)
    await asyncio.gather(large, small)
    assert order == ["large", "small"] and budget.free == 40
    budget.release(50)
    budget.release(10)
    assert budget.free == budget.total


async def test_decodes_share_the_budget_and_a_cancelled_one_gives_its_share_back() -> None:
    data = encoded(3600, 2700, "PNG", mode="P", color=7)
    opened = open_image(data)
    opened.image.close()
    budget = ByteBudget(opened.cost * 3 // 2)  # one decode at a time
    parts = await asyncio.gather(*(decode_image(data, budget) for _ in range(3)))
    assert len({part.data for part in parts}) == 1 and budget.free == budget.total

    task = asyncio.create_task(decode_image(data, budget))
    while budget.free == budget.total:  # wait until it holds its share, then leave
        await asyncio.sleep(0.001)
    task.cancel()  # a running decode goes on: its share comes back when its thread is done
    await asyncio.gather(task, return_exceptions=True)
    for _ in range(500):
        if budget.free == budget.total:
            break
        await asyncio.sleep(0.01)
    assert budget.free == budget.total
