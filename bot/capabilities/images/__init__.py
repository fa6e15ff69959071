"""Images out: `/imagine` and the `draw_image` tool draw on the server's own image route
(`/model image set`) or else the operator's (`DEFAULT_IMAGE_*`) and post the image as a
file with the prompt used in a small line.

Seams it fills (`bot.question.seams`, in `capability.py`): **join** — every answer that has
an image route; **tools** — `draw_image` (`tool.py`), bound to the answer's asker and route;
**after** — the prompt line under the answer and the image below it.

`environment.py` holds the operator's settings (`Settings` inherits them) and the start-up
check; `drawing.py` the bounds (sizes, prompt length, the image to change) and a route with
its keys in turn; `route_storage.py` the server's own route (the table
`bot.db.models_images.ServerImageRoute`, cached with the server's configuration),
`server_route.py` drawing on it with the server's keys, `route_commands.py` its
`/model image set|clear`; `service.py` picks the route and holds the member's daily limit
around it (the lowest of `IMAGES_PER_DAY` and the server's `/limits set images_per_day`,
counted in `storage.py`); `settings.py` the `/settings images` switch; `posting.py` the
prompt line and file name; `commands.py` is `/imagine`. The wire format is
`providers.images`.
"""
