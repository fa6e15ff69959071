"""Documents (`DocumentPart`) on the OpenAI wire family, as the real openai SDK sends them
to the local replay server.

A PDF goes as a file: a `file` content part (`file_data` a base64 data URL) to every
OpenRouter model (no `plugins` entry) on chat completions, and an `input_file` part to
OpenAI's file-reading models (gpt-4o and later vision models) on the Responses API;
everywhere else, and for a document of any other media type, it goes as its extracted
text in a fenced block (`providers.types.part_text`), and a document without text gives
no part at all.
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from pypdf import PdfWriter

from providers.capabilities import capabilities_of
from providers.openai_compat.request import build_request
from providers.openai_responses.capabilities import takes_files as openai_takes_files
from providers.openai_responses.request import build_body
from providers.types import ChatRequest, DocumentPart, ImagePart, Message, TextPart, part_text
from tests.support import data_openai as fx
from tests.support import data_openai_responses as rx
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply


def small_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=72, height=72)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


PDF_BYTES = small_pdf()
DATA_URL = "data:application/pdf;base64," + base64.b64encode(PDF_BYTES).decode("ascii")
REPORT = DocumentPart("application/pdf", PDF_BYTES, "report.pdf", "[Page 1]\nQuarterly numbers: 42")
SCANNED = DocumentPart("application/pdf", PDF_BYTES, "scan.pdf")  # no text layer
CUT = DocumentPart("application/pdf", PDF_BYTES, "long.pdf", "page after page ```code```", text_cut=True)
DOCX = DocumentPart("application/vnd.openxmlformats-officedocument.wordprocessingml.document",
                    b"PK\x03\x04 not really a docx", "notes.docx", "meeting notes")
PIXEL = ImagePart("image/png", b"\x89PNG\r\n\x1a\n-fake")

FILE_PART = {"type": "file", "file": {"filename": "report.pdf", "file_data": DATA_URL}}
INPUT_FILE = {"type": "input_file", "filename": "report.pdf", "file_data": DATA_URL}
FILE_ROUTES = [("openrouter", "anthropic/claude-sonnet-4.5"), ("openrouter", "deepseek/deepseek-chat")]
TEXT_ROUTES = [("deepseek", "deepseek-chat"), ("zai", "glm-4.6"), ("custom", "m-test")]
OPENAI_FILE_MODELS = ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o4-mini"]
OPENAI_TEXT_MODELS = ["gpt-3.5-turbo", "gpt-4-turbo", "o3-mini", "gpt-4o-search-preview"]


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def input_text(value: str) -> dict:
    return {"type": "input_text", "text": value}


def asking(*parts, history: tuple[Message, ...] = ()) -> ChatRequest:
    return ChatRequest(messages=[*history, Message("user", list(parts))], system="Be brief.")


async def sent_body(server, provider: str, model: str, request: ChatRequest) -> dict:
    """The JSON body the real SDK sent for `request`."""
    server.reply(Reply(body=rx.sse_body(rx.TEXT) if provider == "openai" else fx.sse_body(fx.TEXT)))
    outcome = await served_outcome(server, provider, request=request, model=model)
    assert outcome.error is None, outcome.error
    return server.requests[-1].json


def file_parts(body: dict) -> list[dict]:
    return [part for message in body["messages"] if isinstance(message["content"], list)
            for part in message["content"] if part.get("type") == "file"]


# ---- file routes -----------------------------------------------------------------------------
@pytest.mark.parametrize(("provider", "model"), FILE_ROUTES)
async def test_a_pdf_goes_as_a_file_part_in_order_with_the_text(provider_server, provider, model):
    body = await sent_body(provider_server, provider, model,
                           asking(TextPart("Attached: report.pdf"), REPORT, TextPart("sum it up")))
    assert body["messages"][-1] == {"role": "user", "content": [
        text("Attached: report.pdf"), FILE_PART, text("sum it up"),
    ]}
    assert "Quarterly numbers" not in json.dumps(body)  # the file, not its text as well
    assert "plugins" not in body  # OpenRouter: native reading, or its default parser


async def test_the_file_part_carries_the_exact_data_url_of_the_pdf(provider_server):
    body = await sent_body(provider_server, "openrouter", "openai/gpt-4o", asking(TextPart("what is it?"), REPORT))
    [part] = file_parts(body)
    assert part["file"]["file_data"] == DATA_URL
    assert base64.b64decode(part["file"]["file_data"].split(",", 1)[1]) == PDF_BYTES
    assert PDF_BYTES.startswith(b"%PDF-")


async def test_openrouter_sends_a_text_less_pdf_as_a_file_too(provider_server):
    """OpenRouter reads (or OCRs) the file itself: a scan the bot found no text in still goes."""
    body = await sent_body(provider_server, "openrouter", "google/gemini-2.5-flash",
                           asking(TextPart("read this"), SCANNED))
    assert body["messages"][-1]["content"] == [
        text("read this"), {"type": "file", "file": {"filename": "scan.pdf", "file_data": DATA_URL}},
    ]


async def test_images_and_pdfs_travel_together_on_a_file_route(provider_server):
    body = await sent_body(provider_server, "openrouter", "openai/gpt-4.1-mini",
                           asking(PIXEL, REPORT, TextPart("compare")))
    assert [part["type"] for part in body["messages"][-1]["content"]] == ["image_url", "file", "text"]


# ---- text routes -----------------------------------------------------------------------------
@pytest.mark.parametrize(("provider", "model"), TEXT_ROUTES)
async def test_a_text_only_route_gets_the_fenced_text(provider_server, provider, model):
    body = await sent_body(provider_server, provider, model,
                           asking(TextPart("Attached: report.pdf"), REPORT, TextPart("sum it up")))
    assert body["messages"][-1]["content"] == [
        text("Attached: report.pdf"),
        text("Document report.pdf:\n```\n[Page 1]\nQuarterly numbers: 42\n```"),
        text("sum it up"),
    ]
    assert not file_parts(body)
    assert '"file"' not in json.dumps(body) and "file_data" not in json.dumps(body)


@pytest.mark.parametrize(("provider", "model"), TEXT_ROUTES)
async def test_a_text_less_pdf_on_a_text_route_sends_no_empty_part(provider_server, provider, model):
    body = await sent_body(provider_server, provider, model, asking(TextPart("what is this?"), SCANNED))
    assert body["messages"][-1]["content"] == [text("what is this?")]
    for message in body["messages"]:
        if isinstance(message["content"], list):
            assert all(part.get("text") for part in message["content"])


async def test_a_cut_document_says_so_in_its_text(provider_server):
    body = await sent_body(provider_server, "deepseek", "deepseek-chat", asking(CUT))
    assert body["messages"][-1]["content"] == [text(part_text(CUT))]
    assert part_text(CUT).endswith("[The text of this document was cut to its first 500 KB.]")
    assert "````\npage after page ```code```\n````" in part_text(CUT)


@pytest.mark.parametrize(("provider", "model"), FILE_ROUTES + TEXT_ROUTES)
async def test_a_document_of_another_type_is_text_everywhere(provider_server, provider, model):
    body = await sent_body(provider_server, provider, model, asking(TextPart("see"), DOCX))
    assert body["messages"][-1]["content"] == [text("see"), text("Document notes.docx:\n```\nmeeting notes\n```")]
    assert not file_parts(body)


# ---- history ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("provider", "model", "converted"), [
    ("openrouter", "openai/gpt-4o", FILE_PART),
    ("deepseek", "deepseek-chat", text(part_text(REPORT))),
    ("zai", "glm-4.6", text(part_text(REPORT))),
    ("custom", "m-test", text(part_text(REPORT))),
])
async def test_a_document_in_an_earlier_user_turn_converts_the_same_way(provider_server, provider, model,
                                                                         converted):
    history = (Message("user", [TextPart("Attached: report.pdf"), REPORT]),
               Message("assistant", "It shows quarterly numbers."))
    body = await sent_body(provider_server, provider, model, asking(TextPart("and the total?"), history=history))
    assert body["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [text("Attached: report.pdf"), converted]},
        {"role": "assistant", "content": "It shows quarterly numbers."},
        {"role": "user", "content": [text("and the total?")]},
    ]


async def test_a_document_only_turn_of_a_named_speaker(provider_server):
    """A name that does not fit the `name` field becomes a text part before the document."""
    request = ChatRequest(messages=[Message("user", [REPORT], name="太郎")])
    body = await sent_body(provider_server, "zai", "glm-4.6", request)
    assert body["messages"] == [{"role": "user", "content": [text("太郎:"), text(part_text(REPORT))]}]
    body = await sent_body(provider_server, "openrouter", "openai/gpt-5", request)
    assert body["messages"] == [{"role": "user", "content": [text("太郎:"), FILE_PART]}]
    body = await sent_body(provider_server, "openai", "gpt-5", request)
    assert body["input"] == [{"role": "user", "content": [input_text("太郎:"), INPUT_FILE]}]


# ---- OpenAI on the Responses API ---------------------------------------------------------------
@pytest.mark.parametrize("model", OPENAI_FILE_MODELS)
async def test_openai_reads_a_pdf_as_an_input_file_in_order_with_the_text(provider_server, model):
    body = await sent_body(provider_server, "openai", model,
                           asking(TextPart("Attached: report.pdf"), REPORT, TextPart("sum it up")))
    assert body["input"][-1] == {"role": "user", "content": [
        input_text("Attached: report.pdf"), INPUT_FILE, input_text("sum it up")]}
    assert "Quarterly numbers" not in json.dumps(body)
    assert base64.b64decode(body["input"][-1]["content"][1]["file_data"].split(",", 1)[1]) == PDF_BYTES


async def test_openai_images_and_pdfs_travel_together(provider_server):
    body = await sent_body(provider_server, "openai", "gpt-4.1-mini", asking(PIXEL, REPORT, TextPart("compare")))
    assert [part["type"] for part in body["input"][-1]["content"]] == ["input_image", "input_file", "input_text"]


@pytest.mark.parametrize("model", OPENAI_TEXT_MODELS)
async def test_openai_models_without_files_get_the_fenced_text_and_no_empty_part(provider_server, model):
    body = await sent_body(provider_server, "openai", model,
                           asking(TextPart("Attached: report.pdf"), REPORT, TextPart("sum it up")))
    assert body["input"][-1]["content"] == [
        input_text("Attached: report.pdf"),
        input_text("Document report.pdf:\n```\n[Page 1]\nQuarterly numbers: 42\n```"),
        input_text("sum it up"),
    ]
    scanned = await sent_body(provider_server, "openai", model, asking(TextPart("what is this?"), SCANNED))
    assert scanned["input"][-1]["content"] == [input_text("what is this?")]
    assert "file_data" not in json.dumps(body) + json.dumps(scanned)


@pytest.mark.parametrize("model", OPENAI_FILE_MODELS + OPENAI_TEXT_MODELS)
async def test_openai_reads_a_document_of_another_type_as_text(provider_server, model):
    history = (Message("user", [TextPart("Attached: report.pdf"), REPORT]),
               Message("assistant", "It shows quarterly numbers."))
    body = await sent_body(provider_server, "openai", model, asking(TextPart("see"), DOCX, history=history))
    reads_files = model in OPENAI_FILE_MODELS
    assert body["input"] == [
        {"role": "user", "content": [input_text("Attached: report.pdf"),
                                     INPUT_FILE if reads_files else input_text(part_text(REPORT))]},
        {"role": "assistant", "content": "It shows quarterly numbers."},
        {"role": "user", "content": [input_text("see"), input_text("Document notes.docx:\n```\nmeeting notes\n```")]},
    ]


# ---- which route takes files; the conversion never fails (pure) ------------------------------
def test_which_models_take_pdf_files():
    for provider, model in FILE_ROUTES + [("openai", model) for model in OPENAI_FILE_MODELS]:
        assert capabilities_of(provider, model).documents == "file"
    for provider, model in TEXT_ROUTES + [("openai", model) for model in OPENAI_TEXT_MODELS]:
        assert capabilities_of(provider, model).documents == "text"
    assert capabilities_of("openai", "").documents == "text"
    for model in ("chatgpt-4o-latest", "gpt-4.1-nano", "gpt-5.1", "gpt-5-chat-latest", "o1", "o3-pro"):
        assert openai_takes_files(model), model
    for model in ("o1-mini", "o1-preview", "gpt-4o-audio-preview", "gpt-4o-realtime-preview",
                  "gpt-4o-mini-transcribe", "gpt-oss-120b", "gpt-4", "davinci-002"):
        assert not openai_takes_files(model), model


@pytest.mark.parametrize("provider", ["openai", "openrouter", "deepseek", "zai", "custom"])  # openai: Responses
@pytest.mark.parametrize("document", [
    DocumentPart("application/pdf", b"", ""),
    DocumentPart("APPLICATION/PDF; charset=binary", b"%PDF-1.4", "x.pdf", ""),
    DocumentPart("text/plain", b"", "empty.txt"),
    DocumentPart("application/pdf", PDF_BYTES, "a.pdf", "````` odd ``` fences"),
])
def test_odd_documents_convert_without_failing(provider, document):
    request = ChatRequest(messages=[Message("user", [document]), Message("assistant", [document]),
                                    Message("system", [document]), Message("user", [TextPart("ok"), document])])
    if provider == "openai":
        for item in build_body(request, capabilities_of(provider, "gpt-4o"))["input"]:
            content = item["content"]
            assert isinstance(content, str) or all(part.get("text") or part["type"] != "input_text"
                                                    for part in content)
        return
    messages = build_request(capabilities_of(provider, "gpt-4o"), request)["messages"]
    for message in messages:
        content = message["content"]
        assert isinstance(content, str) or all(part.get("text") or part["type"] != "text" for part in content)
    if provider == "openrouter" and document.media_type.lower().startswith("application/pdf"):
        assert messages[-1]["content"][-1]["file"]["filename"] == (document.filename or "document.pdf")


def test_a_turn_of_only_a_text_less_document_is_an_empty_string():
    request = ChatRequest(messages=[Message("user", [SCANNED])])
    assert build_request(capabilities_of("deepseek", "deepseek-chat"), request)["messages"] == [{"role": "user", "content": ""}]
