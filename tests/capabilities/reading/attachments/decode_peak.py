"""The peak memory of decoding one image file, in a fresh process, next to what
`decode_cost` said it would be: `python -m tests.capabilities.reading.attachments.decode_peak <file>` prints
`{"cost": bytes, "peak": bytes}`.

The peak is `VmHWM` (reset through `/proc/self/clear_refs` after the file is read) less
the memory at the reset: Pillow allocates in C, where tracemalloc does not look, and a
fresh process has no memory an earlier decode freed but kept to hide this one's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bot.capabilities.reading.attachment_files import decode_opened, open_image
from tests.capabilities.reading.attachments.decode_scenario import _reset_peak_memory, _status_bytes


def main() -> None:
    data = Path(sys.argv[1]).read_bytes()
    start = _reset_peak_memory()
    opened = open_image(data, budget=1 << 40)  # measure any size: the budget is not the question
    cost = opened.cost
    decode_opened(opened)
    print(json.dumps({"cost": cost, "peak": _status_bytes("VmHWM") - start}))


if __name__ == "__main__":
    main()
