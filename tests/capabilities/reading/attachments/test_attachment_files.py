"""The pure conversion of attached files: kinds, downscaling, refusals, text blocks."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from bot.capabilities.reading.attachment_files import (
    MAX_IMAGE_BYTES,
    MAX_LONG_SIDE,
    MAX_TEXT_BYTES,
    UnreadableFile,
    classify,
    decode_text,
    language_of,
    scaled_size,
    text_block,
)
from tests.support.in_thread import prepare_image


def encoded(width: int, height: int, fmt: str = "PNG", mode: str = "RGB", color=(200, 30, 30), **save) -> bytes:
    out = io.BytesIO()
    Image.new(mode, (width, height), color).save(out, fmt, **save)
    return out.getvalue()


def opened(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image


@pytest.mark.parametrize("size,expected", [
    ((3000, 2000), (1568, 1045)),
    ((2000, 3000), (1045, 1568)),
    ((1568, 900), (1568, 900)),
    ((100, 50), (100, 50)),
    ((10, 5000), (3, 1568)),
    ((20000, 1), (1568, 1)),
])
def test_scaled_size_bounds_the_long_side_and_never_enlarges(size, expected):
    assert scaled_size(*size) == expected


@pytest.mark.parametrize("name,content_type,kind", [
    ("cat.png", "image/png", "image"),
    ("cat.JPG", "image/jpeg", "image"),
    ("anim.gif", "image/gif", "image"),
    ("pic.webp", "image/webp", "image"),
    ("pic.webp", None, "image"),
    ("logo.svg", "image/svg+xml", "other"),
    ("photo.heic", "image/heic", "other"),
    ("notes.txt", "text/plain; charset=utf-8", "text"),
    ("data.json", "application/json", "text"),
    ("main.py", None, "text"),
    ("main.py", "application/octet-stream", "text"),
    ("lib.rs", "application/octet-stream", "text"),
    ("Dockerfile", None, "text"),
    ("blob.bin", "application/octet-stream", "other"),
    ("archive.zip", "application/zip", "other"),
    ("movie.mp4", "video/mp4", "other"),
])
def test_classify(name, content_type, kind):
    assert classify(name, content_type) == kind


def test_large_png_is_downscaled_and_stays_png():
    part = prepare_image(encoded(3000, 2000))
    assert part.media_type == "image/png"
    image = opened(part.data)
    assert image.format == "PNG" and image.size == (1568, 1045)
    assert image.getpixel((10, 10)) == (200, 30, 30)


def test_jpeg_stays_jpeg_and_small_images_keep_their_size():
    part = prepare_image(encoded(640, 480, "JPEG"))
    assert part.media_type == "image/jpeg"
    assert opened(part.data).size == (640, 480)


def test_webp_and_gif_become_png_and_a_gif_gives_its_first_frame():
    webp = prepare_image(encoded(2400, 600, "WEBP"))
    assert webp.media_type == "image/png" and opened(webp.data).size == (MAX_LONG_SIDE, 392)
    frames = [Image.new("RGB", (50, 40), c) for c in ((0, 0, 255), (0, 255, 0))]
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], duration=100)
    gif = prepare_image(out.getvalue())
    image = opened(gif.data)
    assert gif.media_type == "image/png" and image.size == (50, 40)
    assert image.convert("RGB").getpixel((5, 5)) == (0, 0, 255)


def test_transparency_is_kept():
    part = prepare_image(encoded(2000, 100, mode="RGBA", color=(0, 0, 0, 0)))
    image = opened(part.data)
    assert image.mode == "RGBA" and image.getpixel((0, 0))[3] == 0


def test_exif_orientation_is_applied():
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° clockwise when shown
    part = prepare_image(encoded(400, 100, "JPEG", exif=exif.tobytes()))
    assert opened(part.data).size == (100, 400)


def test_metadata_is_dropped():
    exif = Image.Exif()
    exif[0x010F] = "SecretCameraMaker"
    part = prepare_image(encoded(300, 200, "JPEG", exif=exif.tobytes()))
    assert b"SecretCameraMaker" not in part.data


@pytest.mark.parametrize("data", [
    b"not an image at all",
    encoded(300, 200)[:200],  # a cut PNG
    b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
    encoded(30, 20, "BMP"),  # a format outside the ones every provider reads
])
def test_broken_or_foreign_images_are_unreadable(data):
    with pytest.raises(UnreadableFile) as caught:
        prepare_image(data)
    assert caught.value.reason == "unreadable"


def test_pixel_bomb_is_refused_before_decoding():
    bomb = encoded(10_000, 10_000, mode="1", color=0)  # 100 megapixels in a few kilobytes
    assert len(bomb) < 100_000
    with pytest.raises(UnreadableFile) as caught:
        prepare_image(bomb)
    assert caught.value.reason == "too_large"


def test_too_many_bytes_are_refused():
    with pytest.raises(UnreadableFile) as caught:
        prepare_image(b"\x89PNG" + b"\x00" * MAX_IMAGE_BYTES)
    assert caught.value.reason == "too_large"


def test_decode_text_replaces_bad_bytes_and_drops_the_bom():
    assert decode_text("\ufeffprint('é')\n".encode()) == "print('é')\n"
    assert decode_text(b"ok \xff\xfe end") == "ok \ufffd\ufffd end"


def test_decode_text_refuses_binary_and_large_files():
    with pytest.raises(UnreadableFile) as binary:
        decode_text(b"ELF\x00\x01\x02")
    assert binary.value.reason == "not_text"
    with pytest.raises(UnreadableFile) as large:
        decode_text(b"a" * (MAX_TEXT_BYTES + 1))
    assert large.value.reason == "too_large"
    assert decode_text(b"a" * MAX_TEXT_BYTES) == "a" * MAX_TEXT_BYTES


def test_text_block_names_the_file_and_outlasts_inner_fences():
    assert text_block("main.py", "print(1)") == "File: main.py\n```python\nprint(1)\n```"
    inner = "# Title\n```js\nx()\n```\n"
    block = text_block("README.md", inner)
    assert block == f"File: README.md\n````markdown\n{inner}````"
    assert language_of("notes.TXT") == "" and language_of("Makefile") == "makefile"
