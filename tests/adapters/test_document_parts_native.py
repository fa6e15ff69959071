"""A PDF (`DocumentPart`) in a user turn, as the real google-genai and anthropic SDKs send it.

Gemini takes it as `inlineData` (application/pdf, base64) and Claude 3.5 and later as a
base64 `document` block titled with its file name, each in its place among the turn's
parts; Gemma, the Claude models before 3.5, and any document that is not a PDF read its
extracted text as a fenced block (`providers.types.part_text`). A document without text on
such a model sends nothing of its own (no empty text part: providers refuse those). The
bodies are read where the SDK sent them (the replay server), never from a mocked SDK.
"""

from __future__ import annotations

import base64
import io

import pytest
from pypdf import PdfReader, PdfWriter

from providers.anthropic_native.capabilities import takes_documents as claude_takes_documents
from providers.anthropic_native.request import build_arguments
from providers.capabilities import capabilities_of
from providers.gemini.request import build_body
from providers.types import ChatRequest, DocumentPart, ImagePart, Message, TextPart, part_text
from tests.support.data_anthropic import a_text_block, anthropic_events
from tests.support.data_gemini import GEMINI_THINK_TEXT
from tests.support.drive_adapter import served_outcome
from tests.support.fake_provider_server import Reply


def tiny_pdf() -> bytes:
    """A valid one-page PDF (blank: a text layer needs no font for these tests)."""
    writer = PdfWriter()
    writer.add_blank_page(width=72, height=72)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


PDF = tiny_pdf()
PDF_B64 = base64.b64encode(PDF).decode("ascii")
TEXT = "[Page 1]\nQuarterly revenue rose 12%."
REPORT = DocumentPart("application/pdf", PDF, "report.pdf", TEXT)
SCAN = DocumentPart("application/pdf", PDF, "scan.pdf")  # no text layer
FENCED = f"Document report.pdf:\n```\n{TEXT}\n```"
PIXEL = ImagePart("image/png", b"\x89PNG\r\n\x1a\n-fake-but-opaque-bytes")
PIXEL_B64 = base64.b64encode(PIXEL.data).decode("ascii")
TURN = [TextPart("Attached PDF: report.pdf"), REPORT, TextPart("Attached image: a.png"), PIXEL,
        TextPart("what changed?")]
ANTHROPIC_TEXT = anthropic_events([a_text_block(0, ["Revenue ", "rose."])], "end_turn", 3)


def test_the_test_pdf_is_a_pdf():
    assert PDF.startswith(b"%PDF-") and len(PdfReader(io.BytesIO(PDF)).pages) == 1
    assert part_text(REPORT) == FENCED and part_text(SCAN) == ""


async def gemini_sent(server, model: str, request: ChatRequest) -> dict:
    out = await served_outcome(server, "google", Reply(body=GEMINI_THINK_TEXT), request, model=model)
    assert out.done is not None, out
    sent = server.requests[-1]
    assert sent.path == f"/v1beta/models/{model}:streamGenerateContent"
    assert sent.json == build_body(request, capabilities_of("google", model))
    return sent.json


async def claude_sent(server, model: str, request: ChatRequest) -> dict:
    out = await served_outcome(server, "anthropic", Reply.named_sse(ANTHROPIC_TEXT), request, model=model)
    assert out.done is not None and out.text == "Revenue rose.", out
    sent = server.requests[-1]
    assert sent.path == "/v1/messages"
    assert sent.json["model"] == model
    return sent.json


# ---- Gemini ----------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["gemini-2.5-flash", "gemini-3-pro-preview", "gemini-1.5-pro"])
async def test_gemini_gets_the_pdf_inline_in_its_place(provider_server, model):
    body = await gemini_sent(provider_server, model, ChatRequest(messages=[Message("user", TURN)]))
    assert body["contents"] == [{"role": "user", "parts": [
        {"text": "Attached PDF: report.pdf"},
        {"inlineData": {"mimeType": "application/pdf", "data": PDF_B64}},
        {"text": "Attached image: a.png"},
        {"inlineData": {"mimeType": "image/png", "data": PIXEL_B64}},
        {"text": "what changed?"},
    ]}]
    assert base64.b64decode(body["contents"][0]["parts"][1]["inlineData"]["data"]) == PDF


async def test_gemma_reads_the_pdf_as_fenced_text(provider_server):
    body = await gemini_sent(provider_server, "gemma-3-27b-it", ChatRequest(messages=[Message("user", TURN)]))
    assert body["contents"][0]["parts"] == [
        {"text": "Attached PDF: report.pdf"},
        {"text": FENCED},
        {"text": "Attached image: a.png"},
        {"inlineData": {"mimeType": "image/png", "data": PIXEL_B64}},  # Gemma still sees images
        {"text": "what changed?"},
    ]
    assert "application/pdf" not in str(body)


async def test_gemma_sends_no_empty_part_for_a_pdf_without_text(provider_server):
    request = ChatRequest(messages=[Message("user", [TextPart("Attached PDF: scan.pdf"), SCAN,
                                                      TextPart("what is it?")])])
    body = await gemini_sent(provider_server, "gemma-3-27b-it", request)
    assert body["contents"][0]["parts"] == [{"text": "Attached PDF: scan.pdf"}, {"text": "what is it?"}]


def test_which_gemini_models_take_documents():
    for model in ("gemini-2.5-flash", "models/gemini-2.0-flash", "gemini-3-pro-preview", "gemini-9-ultra"):
        assert capabilities_of("google", model).documents == "file", model
    for model in ("gemma-3-27b-it", "models/gemma-3n-e4b-it", " Gemma-2-9b-it "):
        assert capabilities_of("google", model).documents == "text", model


# ---- Claude ----------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "claude-3-5-sonnet-20241022",
                                   "claude-3-5-haiku-20241022", "claude-3-7-sonnet-20250219", "claude-test"])
async def test_claude_35_and_later_get_a_document_block_in_its_place(provider_server, model):
    body = await claude_sent(provider_server, model, ChatRequest(messages=[Message("user", TURN)]))
    assert body["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "Attached PDF: report.pdf"},
        {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF_B64},
         "title": "report.pdf"},
        {"type": "text", "text": "Attached image: a.png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL_B64}},
        {"type": "text", "text": "what changed?"},
    ]}]


@pytest.mark.parametrize("model", ["claude-3-opus-20240229", "claude-3-haiku-20240307", "claude-2.1"])
async def test_claude_before_35_reads_the_pdf_as_fenced_text(provider_server, model):
    body = await claude_sent(provider_server, model, ChatRequest(messages=[Message("user", TURN)]))
    assert body["messages"][0]["content"] == [
        {"type": "text", "text": "Attached PDF: report.pdf"},
        {"type": "text", "text": FENCED},
        {"type": "text", "text": "Attached image: a.png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PIXEL_B64}},
        {"type": "text", "text": "what changed?"},
    ]
    assert '"document"' not in str(body).replace("'", '"')


async def test_older_claude_sends_no_empty_block_for_a_pdf_without_text(provider_server):
    request = ChatRequest(messages=[Message("user", [TextPart("Attached PDF: scan.pdf"), SCAN,
                                                      TextPart("what is it?")])])
    body = await claude_sent(provider_server, "claude-3-opus-20240229", request)
    assert body["messages"][0]["content"] == [{"type": "text", "text": "Attached PDF: scan.pdf"},
                                              {"type": "text", "text": "what is it?"}]


async def test_a_pdf_alone_with_a_speaker_keeps_the_name_and_the_file(provider_server):
    body = await claude_sent(provider_server, "claude-sonnet-4-5",
                             ChatRequest(messages=[Message("user", [REPORT], name="Ana")]))
    assert [block["type"] for block in body["messages"][0]["content"]] == ["text", "document"]
    assert body["messages"][0]["content"][0]["text"] == "Ana:"


def test_a_long_file_name_is_cut_to_the_title_bound():
    long = DocumentPart("application/pdf", PDF, "x" * 600 + ".pdf", TEXT)
    arguments = build_arguments(ChatRequest(messages=[Message("user", [long])]), capabilities_of("anthropic", "claude-sonnet-4-5"))
    assert arguments["messages"][0]["content"][0]["title"] == "x" * 500


def test_which_claude_models_take_documents():
    for model in ("claude-3-5-sonnet-20240620", "claude-3-5-sonnet-latest", "claude-sonnet-4-5", "claude-opus-4-7",
                  "claude-mythos-1", "claude-fable-2", "my-gateway-alias"):
        assert claude_takes_documents(model), model
    for model in ("claude-3-opus-20240229", "claude-3-sonnet-20240229", "claude-3-haiku-20240307", "claude-2.1",
                  "claude-2.0", "claude-instant-1.2"):
        assert not claude_takes_documents(model), model


# ---- any other document, and documents outside user turns (both families, pure) ---------------
def test_a_document_of_another_media_type_reads_as_its_text_everywhere():
    other = DocumentPart("application/vnd.oasis.opendocument.text", b"PK\x03\x04odt", "notes.odt", "hello")
    textless = DocumentPart("application/epub+zip", b"PK\x03\x04", "book.epub")
    request = ChatRequest(messages=[Message("user", [other, textless, TextPart("sum up")])])
    fenced = "Document notes.odt:\n```\nhello\n```"
    for model in ("gemini-2.5-flash", "gemma-3-27b-it"):
        assert build_body(request, capabilities_of("google", model))["contents"][0]["parts"] == [{"text": fenced}, {"text": "sum up"}]
    for model in ("claude-sonnet-4-5", "claude-3-opus-20240229"):
        assert build_arguments(request, capabilities_of("anthropic", model))["messages"][0]["content"] == [
            {"type": "text", "text": fenced}, {"type": "text", "text": "sum up"}]


def test_a_document_in_an_assistant_or_system_turn_is_its_text():
    request = ChatRequest(messages=[Message("system", [TextPart("rules"), REPORT]),
                                    Message("user", "hi"), Message("assistant", [REPORT])])
    body = build_body(request, capabilities_of("google", "gemini-2.5-flash"))
    assert body["systemInstruction"] == {"parts": [{"text": f"rules\n\n{FENCED}"}]}
    assert body["contents"][1] == {"role": "model", "parts": [{"text": FENCED}]}
    arguments = build_arguments(request, capabilities_of("anthropic", "claude-sonnet-4-5"))
    assert arguments["system"] == f"rules\n\n{FENCED}"
    assert arguments["messages"][1] == {"role": "assistant", "content": [{"type": "text", "text": FENCED}]}
