"""What an attached file becomes for the model (pure, no I/O): its kind, an image
re-encoded at a size every provider takes, or a text file as a fenced block.

Images are always decoded and re-encoded: that bounds what reaches a provider (the
long side, the formats every family reads; a GIF becomes its first frame) and drops
metadata such as a photo's location. The pixel count is checked from the header,
before any pixel is decoded, so a small file that inflates to gigabytes is refused.
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import PurePosixPath
from typing import Literal

from PIL import Image, ImageOps

from providers.types import ImagePart

Kind = Literal["image", "text", "other"]

MAX_LONG_SIDE = 1568  # pixels; larger images cost tokens without helping the model
MAX_IMAGE_BYTES = 10 * 1024 * 1024  # refused before downloading
MAX_IMAGE_PIXELS = 40_000_000  # width × height, refused before decoding
MAX_TEXT_BYTES = 100 * 1024

# Formats decoded at all; anything else is refused even when Pillow could read it.
IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "GIF")
PNG_MODES = frozenset({"RGB", "RGBA", "L", "LA"})
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


class UnreadableFile(Exception):
    """A file that cannot be shown to the model; `reason` names why (a catalog suffix)."""

    def __init__(self, reason: Literal["too_large", "unreadable", "not_text"]) -> None:
        super().__init__(reason)
        self.reason = reason


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def _extension(filename: str) -> str:
    return PurePosixPath(filename.lower()).suffix


def classify(filename: str, content_type: str | None) -> Kind:
    """An image, a text file or anything else, from Discord's content type and the name."""
    media, extension = _media_type(content_type), _extension(filename)
    if media in IMAGE_TYPES or (not media and extension in IMAGE_EXTENSIONS):
        return "image"
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


def prepare_image(data: bytes) -> ImagePart:
    """The image decoded, upright, downscaled and re-encoded (JPEG stays JPEG, the rest PNG)."""
    if len(data) > MAX_IMAGE_BYTES:
        raise UnreadableFile("too_large")
    try:
        with warnings.catch_warnings():  # the pixel cap below is ours; Pillow's warning is noise
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
        with image:
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                raise UnreadableFile("too_large")
            source_format = image.format
            image.seek(0)  # a GIF's (or animated WebP's) first frame
            frame = ImageOps.exif_transpose(image)
            return _encode(frame, source_format)
    except UnreadableFile:
        raise
    except Image.DecompressionBombError as exc:
        raise UnreadableFile("too_large") from exc
    except (OSError, ValueError, SyntaxError, EOFError) as exc:  # what Pillow raises on broken files
        raise UnreadableFile("unreadable") from exc


def _encode(image: Image.Image, source_format: str | None) -> ImagePart:
    """Colours first (a palette image resizes badly), then the size, then the file."""
    if source_format == "JPEG":
        frame, media_type, save = image.convert("RGB"), "image/jpeg", {"format": "JPEG", "quality": 90}
    else:
        frame, media_type, save = image, "image/png", {"format": "PNG"}
        if frame.mode not in PNG_MODES:
            frame = frame.convert("RGBA" if frame.has_transparency_data else "RGB")
    size = scaled_size(*frame.size)
    if size != frame.size:
        frame = frame.resize(size, Image.Resampling.LANCZOS, reducing_gap=3.0)
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


def text_block(filename: str, text: str) -> str:
    """`File: name` and the text in a fence longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"File: {filename}\n{fence}{language_of(filename)}\n{body}{fence}"
