"""A local image provider speaking OpenAI's Images API as documented, for the openai SDK.

`async with FakeImageProvider() as fake:` then point a route at `fake.base_url` (…/v1).
`POST /v1/images/generations` (JSON) and `POST /v1/images/edits` (multipart, the image
to change as `image` or `image[]`) check what OpenAI's API checks and answer its errors:
the bearer key (401 `invalid_api_key`), the model, a prompt (at most 32000 characters),
`n` (1-10), the sizes the model family takes, and `response_format`, which GPT Image
models refuse ("Unknown parameter") and DALL·E takes (`url` or `b64_json`). A prompt
holding one of `refused_words` is refused by the "safety system" as OpenAI does (400,
code `moderation_blocked` for GPT Image, `content_policy_violation` for DALL·E). Each
answer holds one PNG per `n` as `b64_json`. Gemini's `POST /v1beta/models/{model}:generateContent`
is answered as its image models do: the `x-goog-api-key` (a bad one is Gemini's 400
"API key not valid"), `responseModalities` with IMAGE, a supported `imageConfig.aspectRatio`,
the image as an `inlineData` part after a thought draft; a refused word is a 200 with
`promptFeedback.blockReason`, "unsafe output" a candidate ending `IMAGE_SAFETY`. OpenRouter's
`POST /api/v1/chat/completions` with `modalities` answers the image as a data URL in the
message's `images`; its moderation refuses a refused word with a 403 naming the flag, and
"unsafe output" ends the choice with `content_filter` (native `IMAGE_SAFETY`).
Every request is recorded in `requests`.
"""

from __future__ import annotations

import base64
import io
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from PIL import Image

from tests.support.env_loopback import serve_on_loopback

IMAGE_KEY = "sk-image-test-0001"
GPT_IMAGE_SIZES = {"1024x1024", "1536x1024", "1024x1536", "auto"}
DALLE3_SIZES = {"1024x1024", "1792x1024", "1024x1792"}
DALLE2_SIZES = {"256x256", "512x512", "1024x1024"}
GENERATE_FIELDS = {"model", "prompt", "n", "size", "response_format", "quality", "background", "moderation",
                   "output_format", "output_compression", "style", "user"}
EDIT_FIELDS = GENERATE_FIELDS - {"style", "moderation"} | {"image", "image[]", "mask", "input_fidelity"}
EDIT_TYPES = {"image/png", "image/jpeg", "image/webp"}


def png(colour: tuple[int, int, int] = (40, 120, 200), size: int = 8) -> bytes:
    """A real PNG of one colour."""
    out = io.BytesIO()
    Image.new("RGB", (size, size), colour).save(out, format="PNG")
    return out.getvalue()


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    fields: dict[str, Any]  # the JSON body, or the multipart form's text fields
    files: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)  # name: (filename, type, bytes)


def error(status: int, message: str, code: str | None, error_type: str = "invalid_request_error",
          param: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json")


@dataclass
class FakeImageProvider:
    keys: set[str] = field(default_factory=lambda: {IMAGE_KEY})
    refused_words: tuple[str, ...] = ("forbidden",)
    image: bytes = field(default_factory=png)
    status: int | None = None  # set: every request answers this status (a scripted outage)
    requests: list[Seen] = field(default_factory=list)
    port: int = 0
    _runner: web.AppRunner | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def openrouter_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v1"

    @property
    def root_url(self) -> str:
        """Where Gemini's SDK is pointed (it adds the API version itself)."""
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> FakeImageProvider:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/images/generations", self._generations)
        app.router.add_post("/v1/images/edits", self._edits)
        app.router.add_post("/v1beta/models/{call}", self._gemini)
        app.router.add_post("/api/v1/chat/completions", self._openrouter)
        self._runner, self.port = await serve_on_loopback(app)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _generations(self, request: web.Request) -> web.Response:
        fields = await request.json()
        self.requests.append(Seen(request.path, dict(request.headers), fields))
        return self._answer(request, fields, GENERATE_FIELDS)

    async def _edits(self, request: web.Request) -> web.Response:
        if request.content_type != "multipart/form-data":
            return error(400, "Expected multipart/form-data.", None)
        fields: dict[str, Any] = {}
        files: dict[str, tuple[str, str, bytes]] = {}
        async for part in await request.multipart():
            if part.filename is not None:
                files[part.name] = (part.filename, part.headers.get("Content-Type", ""), await part.read())
            else:
                fields[part.name] = await part.text()
        self.requests.append(Seen(request.path, dict(request.headers), dict(fields), files))
        images = [files[name] for name in ("image", "image[]") if name in files]
        if not images:
            return error(400, "Missing required parameter: 'image'.", "missing_required_parameter", param="image")
        if any(kind not in EDIT_TYPES for _name, kind, _data in images):
            return error(400, "Invalid file type: only png, jpeg and webp images are supported.",
                         "invalid_image_file", param="image")
        if "n" in fields:
            fields["n"] = int(fields["n"]) if fields["n"].isdigit() else fields["n"]
        return self._answer(request, fields, EDIT_FIELDS | set(files))

    def _answer(self, request: web.Request, fields: dict[str, Any], known: set[str]) -> web.Response:
        """The documented checks in OpenAI's order, then the image (or the safety refusal)."""
        if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.keys:
            return error(401, "Incorrect API key provided.", "invalid_api_key")
        if self.status is not None:
            return error(self.status, "scripted failure", None, "server_error")
        if unknown := sorted(set(fields) - known):
            return error(400, f"Unknown parameter: '{unknown[0]}'.", "unknown_parameter", param=unknown[0])
        model, prompt = fields.get("model"), fields.get("prompt")
        if not isinstance(prompt, str) or not prompt or len(prompt) > 32000:
            return error(400, "Invalid 'prompt': a string of 1 to 32000 characters.", "invalid_value", param="prompt")
        if not isinstance(model, str) or not model.startswith(("gpt-image", "dall-e")):
            return error(404, f"The model '{model}' does not exist.", "model_not_found")
        n = fields.get("n", 1)
        if not isinstance(n, int) or not 1 <= n <= 10 or (model == "dall-e-3" and n != 1):
            return error(400, "Invalid 'n'.", "invalid_value", param="n")
        gpt_image = model.startswith("gpt-image")
        sizes = GPT_IMAGE_SIZES if gpt_image else DALLE3_SIZES if model == "dall-e-3" else DALLE2_SIZES
        if fields.get("size", "1024x1024") not in sizes:
            return error(400, f"Invalid 'size': use one of {', '.join(sorted(sizes))}.", "invalid_value", param="size")
        if "response_format" in fields and (gpt_image or fields["response_format"] not in ("url", "b64_json")):
            return error(400, "Unknown parameter: 'response_format'.", "unknown_parameter", param="response_format")
        if any(word in prompt.lower() for word in self.refused_words):
            code = "moderation_blocked" if gpt_image else "content_policy_violation"
            return error(400, "Your request was rejected by the safety system.", code, "image_generation_user_error")
        if not gpt_image and fields.get("response_format", "url") != "b64_json":
            body: dict[str, Any] = {"created": int(time.time()),
                                    "data": [{"url": "https://example.invalid/image.png"}] * n}
        else:
            body = {"created": int(time.time()), "data": [{"b64_json": base64.b64encode(self.image).decode()}] * n}
        if gpt_image:
            body.update(output_format="png", size=fields.get("size", "1024x1024"), quality="medium")
        return web.Response(body=json.dumps(body).encode(), content_type="application/json")

    async def _gemini(self, request: web.Request) -> web.Response:
        """`models/{model}:generateContent` as Gemini's image models answer it."""
        body = await request.json()
        self.requests.append(Seen(request.path, dict(request.headers), body))
        model, _, action = request.match_info["call"].partition(":")
        if request.headers.get("x-goog-api-key") not in self.keys:
            return gemini_error(400, "API key not valid. Please pass a valid API key.", "INVALID_ARGUMENT")
        if self.status is not None:
            return gemini_error(self.status, "scripted failure", "UNAVAILABLE")
        if action != "generateContent" or "image" not in model:
            return gemini_error(404, f"models/{model} is not found for API version v1beta, or is not "
                                     "supported for generateContent.", "NOT_FOUND")
        config = body.get("generationConfig") or {}
        if "IMAGE" not in (config.get("responseModalities") or []):
            return gemini_error(400, "Model only supports text and image output; ask for IMAGE.", "INVALID_ARGUMENT")
        ratio = (config.get("imageConfig") or {}).get("aspectRatio", "1:1")
        if ratio not in GEMINI_RATIOS:
            return gemini_error(400, f"Unsupported aspect ratio: {ratio}", "INVALID_ARGUMENT")
        parts = [part for content in body.get("contents", []) for part in content.get("parts", [])]
        prompt = " ".join(part["text"] for part in parts if "text" in part)
        if not prompt:
            return gemini_error(400, "* GenerateContentRequest.contents: contents is not specified", "INVALID_ARGUMENT")
        usage = {"promptTokenCount": 12, "candidatesTokenCount": 1290, "totalTokenCount": 1302}
        if any(word in prompt.lower() for word in self.refused_words):
            return gemini_json({"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": usage,
                                "modelVersion": model})
        if "unsafe output" in prompt.lower():
            return gemini_json({"candidates": [{"finishReason": "IMAGE_SAFETY", "index": 0}],
                                "usageMetadata": usage, "modelVersion": model})
        image = base64.b64encode(self.image).decode()
        answer = [{"text": "Here is the image.", "thought": True},
                  {"inlineData": {"mimeType": "image/png", "data": base64.b64encode(png((0, 0, 0))).decode()},
                   "thought": True},
                  {"text": "Here is the image."}, {"inlineData": {"mimeType": "image/png", "data": image}}]
        return gemini_json({"candidates": [{"content": {"role": "model", "parts": answer}, "finishReason": "STOP",
                                            "index": 0}], "usageMetadata": usage, "modelVersion": model})

    async def _openrouter(self, request: web.Request) -> web.Response:
        """OpenRouter's chat completions for an image-output model, `modalities` asking for images."""
        body = await request.json()
        self.requests.append(Seen(request.path, dict(request.headers), body))
        if request.headers.get("Authorization", "").removeprefix("Bearer ") not in self.keys:
            return gemini_json_status(401, {"error": {"code": 401, "message": "No auth credentials found"}})
        if self.status is not None:
            return gemini_json_status(self.status, {"error": {"code": self.status, "message": "scripted failure"}})
        modalities = body.get("modalities") or []
        if "image" not in modalities or not set(modalities) <= {"image", "text"}:
            return gemini_json_status(400, {"error": {"code": 400, "message": "modalities must include image"}})
        ratio = (body.get("image_config") or {}).get("aspect_ratio", "1:1")
        if ratio not in GEMINI_RATIOS:
            return gemini_json_status(400, {"error": {"code": 400, "message": f"invalid aspect_ratio {ratio}"}})
        [message] = body.get("messages") or [{}]
        content = message.get("content")
        prompt = content if isinstance(content, str) else " ".join(
            part.get("text", "") for part in content or [] if part.get("type") == "text")
        if any(word in prompt.lower() for word in self.refused_words):
            return gemini_json_status(403, {"error": {"code": 403, "message": f"{body['model']} requires moderation "
                                                      "on OpenRouter. Your input was flagged for \"violence\"",
                                                      "metadata": {"reasons": ["violence"], "flagged_input": prompt[:20],
                                                                   "provider_name": "Google", "model_slug": body["model"]}}})
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "native_finish_reason": "STOP",
                                  "logprobs": None,
                                  "message": {"role": "assistant", "content": "Here is the image.", "refusal": None,
                                              "images": [{"type": "image_url", "index": 0, "image_url": {
                                                  "url": "data:image/png;base64," + base64.b64encode(self.image).decode()}}]}}
        if "unsafe output" in prompt.lower():
            choice.update(finish_reason="content_filter", native_finish_reason="IMAGE_SAFETY",
                          message={"role": "assistant", "content": "", "refusal": None})
        return gemini_json({"id": "gen-1", "provider": "Google", "model": body["model"], "object": "chat.completion",
                            "created": int(time.time()), "choices": [choice],
                            "usage": {"prompt_tokens": 9, "completion_tokens": 1290, "total_tokens": 1299}})


GEMINI_RATIOS = {"1:1", "2:3", "3:2", "3:4", "4:3", "4:5", "5:4", "9:16", "16:9", "21:9"}


def gemini_json(body: dict[str, Any]) -> web.Response:
    return web.Response(body=json.dumps(body).encode(), content_type="application/json")


def gemini_error(status: int, message: str, state: str) -> web.Response:
    return gemini_json_status(status, {"error": {"code": status, "message": message, "status": state}})


def gemini_json_status(status: int, body: dict[str, Any]) -> web.Response:
    return web.Response(status=status, body=json.dumps(body).encode(), content_type="application/json")
