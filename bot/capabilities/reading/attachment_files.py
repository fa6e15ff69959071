"""What an attached file becomes for the model (pure, no I/O): its kind, an image
re-encoded at a size every provider takes, or a text file as a fenced block (Word and
Excel files are read to text in `bot.capabilities.reading.office_files`, PDFs in `bot.capabilities.reading.pdf_files`).

Images are always decoded and re-encoded: that bounds what reaches a provider (the
long side, the formats every family reads; a GIF becomes its first frame) and drops
metadata such as a photo's location. Before any pixel is decoded, the header gives the
pixel count and what decoding will hold at its peak (`decode_cost`: a JPEG is drafted to
the scale its output needs, the other formats are decoded whole), so a small file that
inflates to gigabytes is refused. The size comes down by Pillow's box reduce and then
Lanczos, and the image is turned upright on the small result. `bot.capabilities.reading.images` runs this in
worker threads within the process's decode budget (`open_image`, then `decode_opened`).
"""

from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from PIL import GifImagePlugin, Image, JpegImagePlugin, PngImagePlugin, WebPImagePlugin

from providers.types import ImagePart

Kind = Literal["image", "text", "docx", "xlsx", "pdf", "other"]

MAX_LONG_SIDE = 1568  # pixels; larger images cost tokens without helping the model
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # refused before downloading
MAX_IMAGE_PIXELS = 40_000_000  # width × height, refused before decoding
MAX_TEXT_BYTES = 100 * 1024
# What the decodes of the whole process may hold at once (`bot.capabilities.reading.images` shares it out), so
# images add at most about 85 MB to the process. An image that would need more alone is
# refused: at 4:3 a WebP is read to 4.6 megapixels (it cannot be drafted and Pillow holds
# 16 bytes a pixel loading one), a PNG to 12.7 (a 4K screenshot, not a 5K one; 7 with
# alpha), a progressive JPEG to 19 (11 without chroma subsampling), a JPEG to 40.
DECODE_BUDGET_BYTES = 80 * 1024 * 1024
DECODE_SLACK_BYTES = 6 * 1024 * 1024  # the codecs' own buffers and tables, the allocator's rounding
REDUCING_GAP = 2.0  # Pillow's thumbnail default: box-reduce to within 2x, then Lanczos

# Formats decoded at all; anything else is refused even when Pillow could read it. Their
# plugins load with this module: else the first WebP opened would import every plugin
# Pillow has, holding the interpreter for tens of milliseconds.
IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
PLUGINS = (PngImagePlugin, JpegImagePlugin, WebPImagePlugin, GifImagePlugin)
PNG_MODES = frozenset({"RGB", "RGBA", "L", "LA"})
JPEG_FORMATS = ("JPEG", "MPO")  # MPO: a phone's JPEG with more pictures after the first
ORIENTATION_TAG = 0x0112
# EXIF orientation -> the turn that makes the image upright (as `ImageOps.exif_transpose`).
TRANSPOSITIONS: dict[int, Image.Transpose] = {
    2: Image.Transpose.FLIP_LEFT_RIGHT, 3: Image.Transpose.ROTATE_180, 4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE, 6: Image.Transpose.ROTATE_270, 7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/jpg", "image/webp", "image/gif"})
IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".webp", ".gif"})
TEXT_TYPES = frozenset({
    "application/json", "application/xml", "application/javascript", "application/x-javascript",
    "application/yaml", "application/x-yaml", "application/toml", "application/x-sh",
    "application/sql", "application/x-python", "application/x-httpd-php", "application/ld+json",
    "application/x-ndjson", "application/csv",
})
# Extension -> the fence's language tag ("" = plain text).
SOURCE_EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".java": "java", ".kt": "kotlin",
    ".kts": "kotlin", ".scala": "scala", ".c": "c", ".h": "c", ".cpp": "cpp", ".cc": "cpp",
    ".cxx": "cpp", ".hpp": "cpp", ".cs": "csharp", ".go": "go", ".rs": "rust", ".rb": "ruby",
    ".php": "php", ".swift": "swift", ".m": "objectivec", ".dart": "dart", ".lua": "lua",
    ".r": "r", ".jl": "julia", ".pl": "perl", ".hs": "haskell", ".ex": "elixir", ".exs": "elixir",
    ".erl": "erlang", ".clj": "clojure", ".sh": "bash", ".bash": "bash", ".zsh": "zsh",
    ".fish": "fish", ".ps1": "powershell", ".bat": "batch", ".sql": "sql", ".html": "html",
    ".htm": "html", ".css": "css", ".scss": "scss", ".less": "less", ".vue": "vue",
    ".svelte": "svelte", ".json": "json", ".jsonl": "json", ".yaml": "yaml", ".yml": "yaml",
    ".toml": "toml", ".ini": "ini", ".cfg": "ini", ".conf": "", ".env": "", ".xml": "xml",
    ".md": "markdown", ".rst": "rst", ".tex": "latex", ".csv": "csv", ".tsv": "", ".txt": "",
    ".log": "", ".diff": "diff", ".patch": "diff", ".proto": "protobuf", ".graphql": "graphql",
    ".tf": "hcl", ".gradle": "groovy", ".groovy": "groovy", ".zig": "zig", ".nim": "nim",
    ".dockerfile": "dockerfile", ".makefile": "makefile", ".cmake": "cmake",
}
SOURCE_NAMES: dict[str, str] = {"dockerfile": "dockerfile", "makefile": "makefile", "readme": ""}
# Documents read to text (Word, Excel) or sent whole with their text (PDF): media type or
# extension -> kind. Discord often states none, or application/octet-stream, for them.
DOCUMENT_TYPES: dict[str, Kind] = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/pdf": "pdf",
}
DOCUMENT_EXTENSIONS: dict[str, Kind] = {".docx": "docx", ".xlsx": "xlsx", ".pdf": "pdf"}
UnreadableReason = Literal["too_large", "too_complex", "unreadable", "not_text", "too_many_pages", "encrypted",
                           "timeout", "busy", "out_of_memory", "reader_failed"]  # the last three: bot.readers


class UnreadableFile(Exception):
    """A file that cannot be shown to the model; `reason` names why (a catalog suffix), and
    `megapixels` the bound that applied when an image would need more memory to decode than
    the process gives one image (a WebP's bound is lower than a JPEG's)."""

    def __init__(self, reason: UnreadableReason, *, megapixels: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.megapixels = megapixels


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _extension(filename: str) -> str:
    return PurePosixPath(filename.lower()).suffix


def classify(filename: str, content_type: str | None) -> Kind:
    """An image, a text file, a document or anything else, from Discord's content type and
    the name."""
    media, extension = _media_type(content_type), _extension(filename)
    if media in IMAGE_TYPES or (not media and extension in IMAGE_EXTENSIONS):
        return "image"
    if document := DOCUMENT_TYPES.get(media) or DOCUMENT_EXTENSIONS.get(extension):
        return document
    if media.startswith("image/"):
        return "other"  # SVG, HEIC, TIFF...: not a format every provider reads
    if media.startswith("text/") or media in TEXT_TYPES:
        return "text"
    if extension in SOURCE_EXTENSIONS or filename.lower() in SOURCE_NAMES:
        return "text"
    return "other"


def scaled_size(width: int, height: int, long_side: int = MAX_LONG_SIDE) -> tuple[int, int]:
    """The size with the long side at most `long_side`, proportions kept (never enlarged)."""
    longest = max(width, height)
    if longest <= long_side:
        return width, height
    ratio = long_side / longest
    return max(1, round(width * ratio)), max(1, round(height * ratio))


@dataclass(slots=True)
class OpenedImage:
    """An image whose header was read (no pixel decoded yet), drafted to the scale its
    output needs, and the bytes decoding it will hold at its peak (`decode_cost`)."""

    image: Image.Image
    source_format: str
    cost: int


def open_image(data: bytes, budget: int = DECODE_BUDGET_BYTES) -> OpenedImage:
    """The image's header read and its decode planned; refused when its bytes, its pixels or
    what decoding it would hold are over the limits, before any pixel is decoded."""
    if len(data) > MAX_IMAGE_BYTES:
        raise UnreadableFile("too_large")
    try:
        with warnings.catch_warnings():  # the pixel cap below is ours; Pillow's warning is noise
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
    except Image.DecompressionBombError as exc:
        raise UnreadableFile("too_large") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # what Pillow raises on broken files
        raise UnreadableFile("unreadable") from exc
    try:
        width, height = image.size
        if width * height > MAX_IMAGE_PIXELS:
            raise UnreadableFile("too_large")
        source_format = image.format or ""
        if source_format in JPEG_FORMATS:  # libjpeg scales by 1/2, 1/4 or 1/8 while decoding
            image.draft(None, scaled_size(width, height))
        cost = decode_cost(image, data, (width, height))
        if cost > budget:  # the bound said: this image's pixels scaled by what fits
            fitting = width * height * (budget - DECODE_SLACK_BYTES) // (cost - DECODE_SLACK_BYTES)
            raise UnreadableFile("too_large", megapixels=max(1, fitting // 1_000_000))
    except BaseException:
        image.close()
        raise
    return OpenedImage(image, source_format, cost)


def decode_opened(opened: OpenedImage) -> ImagePart:
    """The opened image decoded, downscaled, upright and re-encoded (JPEG stays JPEG, the
    rest PNG); the source image is closed afterwards."""
    try:
        with opened.image as image:
            image.seek(0)  # a GIF's (or animated WebP's) first frame
            image.load()
            return _encode(image, opened.source_format)
    except UnreadableFile:
        raise
    except Image.DecompressionBombError as exc:
        raise UnreadableFile("too_large") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:
        raise UnreadableFile("unreadable") from exc


def _storage(mode: str) -> int:
    """Bytes per pixel of a decoded Pillow image of `mode` (LA and RGB take 4, as stored)."""
    if mode in ("1", "L", "P"):
        return 1
    return 2 if mode.startswith("I;16") else 4


def _colour_mode(image: Image.Image, source_format: str) -> str | None:
    """The mode the full-size image is converted to before resizing (a palette resizes
    badly), or None; a JPEG is converted to RGB after resizing, on the small image."""
    if source_format in JPEG_FORMATS or image.mode in PNG_MODES:
        return None
    return "RGBA" if image.has_transparency_data else "RGB"


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _jpeg_coefficients(image: Image.Image, data: bytes, full_size: tuple[int, int]) -> int:
    """Bytes libjpeg keeps for the whole image's DCT coefficients, at full size whatever
    the draft: only a progressive JPEG, or one whose first scan lacks components, needs
    them (libjpeg's `has_multiple_scans`)."""
    layers: list[tuple[int, int, int, int]] = getattr(image, "layer", [])
    sos = data.rfind(b"\xff\xda", 0, image.fp.tell()) if image.fp is not None else -1
    sos = sos if sos >= 0 else data.find(b"\xff\xda")  # an MPO's reader has moved on
    first_scan_components = data[sos + 4] if 0 <= sos < len(data) - 4 else 0
    if not image.info.get("progressive") and first_scan_components >= len(layers):
        return 0
    h_max = max((h for _, h, _, _ in layers), default=1)
    v_max = max((v for _, _, v, _ in layers), default=1)
    total = 0
    for _, h, v, _ in layers:
        blocks_w = _ceil_div(_ceil_div(full_size[0] * h, h_max), 8)
        blocks_h = _ceil_div(_ceil_div(full_size[1] * v, v_max), 8)
        total += _ceil_div(blocks_w, h) * h * _ceil_div(blocks_h, v) * v * 64 * 2
    return total


def decode_cost(image: Image.Image, data: bytes, full_size: tuple[int, int]) -> int:
    """The bytes decoding `image` (opened, drafted, not loaded) holds at its peak, from its
    header. Stages: the load; the full-size colour conversion; the resize (Pillow's
    premultiplied copy of an image with alpha, its reduce to within `REDUCING_GAP` of the
    output, its one-pass intermediate and the output); the turn upright and the encoded
    file. Measured against Pillow 13 / libwebp 1.6; `tests/capabilities/reading/attachments/test_image_decoding.py`
    checks it against a fresh process's peak memory."""
    width, height = image.size
    pixels = width * height
    source_format = image.format or ""
    held = load = pixels * _storage(image.mode)
    if source_format == "WEBP":
        # libwebp's animation decoder keeps two canvases and Pillow copies the frame to
        # bytes, then into the image: 16 bytes a pixel while loading (lossy or lossless),
        # 12 once loaded (the canvases live as long as the image).
        load, held = pixels * 16, pixels * 12
    elif source_format in JPEG_FORMATS:
        load = held + _jpeg_coefficients(image, data, full_size)
    mode = _colour_mode(image, source_format)
    colours = pixels * 4 if mode else 0
    out_w, out_h = scaled_size(width, height)
    resize = 0
    if (out_w, out_h) != (width, height):
        premultiplied = pixels * 4 if (mode or image.mode) in ("RGBA", "LA") else 0
        factor_x = int(width / out_w / REDUCING_GAP) or 1
        factor_y = int(height / out_h / REDUCING_GAP) or 1
        reduced_h = _ceil_div(height, factor_y)
        reduced = _ceil_div(width, factor_x) * reduced_h * 4 if factor_x * factor_y > 1 else 0
        between = out_w * reduced_h * 4
        resize = held + colours + premultiplied + reduced + between + out_w * out_h * 4
    finish = held + colours + 3 * out_w * out_h * 4  # the output, turned upright, encoded
    return max(load, held + colours, resize, finish) + DECODE_SLACK_BYTES


def _encode(image: Image.Image, source_format: str | None) -> ImagePart:
    """Colours first when a full-size conversion cannot be avoided (a palette image resizes
    badly), then the size, upright, then the file; the pixels stay bounded by `decode_cost`."""
    orientation = image.getexif().get(ORIENTATION_TAG, 1)
    frame = image
    if mode := _colour_mode(frame, source_format or ""):
        frame = frame.convert(mode)
    size = scaled_size(*frame.size)
    if size != frame.size:
        frame = frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=REDUCING_GAP)
    if method := TRANSPOSITIONS.get(orientation):
        frame = frame.transpose(method)
    if source_format in JPEG_FORMATS:
        if frame.mode != "RGB":
            frame = frame.convert("RGB")
        media_type, save = "image/jpeg", {"format": "JPEG", "quality": 90}
    else:
        media_type, save = "image/png", {"format": "PNG"}
    out = io.BytesIO()
    frame.save(out, **save)
    return ImagePart(media_type, out.getvalue())


def language_of(filename: str) -> str:
    """The fence's language tag for a file name ("" when none fits)."""
    lowered = filename.lower()
    return SOURCE_EXTENSIONS.get(_extension(lowered), SOURCE_NAMES.get(lowered, ""))


def decode_text(data: bytes) -> str:
    """UTF-8 (a byte-order mark dropped), undecodable bytes replaced; NUL bytes mean binary."""
    if len(data) > MAX_TEXT_BYTES:
        raise UnreadableFile("too_large")
    if b"\x00" in data:
        raise UnreadableFile("not_text")
    return data.decode("utf-8-sig", errors="replace")


def text_block(filename: str, text: str, language: str | None = None) -> str:
    """`File: name` and the text in a fence longer than any backtick run inside it (the
    fence's tag from the name unless `language` says; a sheet of a workbook is `csv`)."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    tag = language_of(filename) if language is None else language
    return f"File: {filename}\n{fence}{tag}\n{body}{fence}"
