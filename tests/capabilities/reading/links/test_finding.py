"""Which links a question's text holds (pure)."""

from __future__ import annotations

import pytest

from bot.capabilities.reading.links import find_links


def test_plain_and_suppressed_links_in_order():
    text = "compare https://a.example/x and <https://b.example/y?q=1> please"
    assert find_links(text) == ["https://a.example/x", "https://b.example/y?q=1"]


def test_scheme_is_case_insensitive_and_only_http_s():
    assert find_links("HTTPS://A.example/ ftp://b.example/ file:///etc/passwd javascript:alert(1)") == [
        "HTTPS://A.example/"]


def test_discord_markup_is_not_a_link():
    text = "<@123456789> <@!42> <#987> <@&55> <:kettle:1234> <t:1700000000:R> </ask:77>"
    assert find_links(text) == []


@pytest.mark.parametrize("url", [
    "https://cdn.discordapp.com/attachments/1/2/report.pdf",
    "https://media.discordapp.net/attachments/1/2/image.png?width=400",
    "https://cdn.discordapp.com/emojis/123.webp",
    "https://discord.com/channels/1/2/3",
    "https://canary.discord.com/channels/@me/2/3",
])
def test_discord_files_and_message_links_skipped(url):
    assert find_links(f"look {url} and https://example.org/") == ["https://example.org/"]


def test_sentence_punctuation_and_markup_trimmed():
    text = ("See https://a.example/page. Or (https://b.example/x), "
            "[docs](https://c.example/d) **https://d.example/e** ||https://e.example/f||")
    assert find_links(text) == ["https://a.example/page", "https://b.example/x",
                                "https://c.example/d", "https://d.example/e", "https://e.example/f"]


def test_brackets_the_url_opened_are_kept():
    assert find_links("https://en.wikipedia.org/wiki/Kettle_(disambiguation).") == [
        "https://en.wikipedia.org/wiki/Kettle_(disambiguation)"]


def test_links_in_code_are_left_alone():
    text = "run `curl https://a.example/x` or\n```\nwget https://b.example/y\n```\nthen https://c.example/"
    assert find_links(text) == ["https://c.example/"]


def test_each_link_once_whatever_its_fragment():
    text = "https://a.example/x https://a.example/x#part <https://a.example/x> https://a.example/y"
    assert find_links(text) == ["https://a.example/x", "https://a.example/y"]


def test_a_link_without_a_host_or_with_a_broken_one_is_skipped():
    assert find_links("http:// https://[::1 https://ok.example/") == ["https://ok.example/"]
