"""Images out: `/imagine` and the `draw_image` tool draw on the operator's image route
(`DEFAULT_IMAGE_*`) and post the image as a file with the prompt used in a small line.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — every answer while
an image route exists; **tools** — `draw_image` (`tool.py`), bound to the answer's asker;
**after** — the prompt line under the answer and the image below it.

`environment.py` holds the operator's settings (`Settings` inherits them) and the start-up
check; `drawing.py` the bounds (sizes, prompt length, the image to change) and the route
with its keys in turn; `service.py` the member's daily limit around it (`IMAGES_PER_DAY`,
counted in `storage.py`, the table `bot.db.models_images`); `posting.py` the prompt line
and file name; `commands.py` is `/imagine`. The wire format is `providers.images`.
"""
