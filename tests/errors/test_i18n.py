"""The catalog loader: locale chains, English fallback, .po without a build, .mo when fresh."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import discord
import pytest

from providers.i18n import Catalogs, domain_for, locale_candidates, normalize_locale

PO_HEADER = (
    'msgid ""\nmsgstr ""\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n"Content-Transfer-Encoding: 8bit\\n"\n\n'
)


def write_po(root: Path, locale: str, domain: str, entries: dict[str, str]) -> Path:
    path = root / locale / "LC_MESSAGES" / f"{domain}.po"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in entries.items())
    path.write_text(PO_HEADER + body, encoding="utf-8")
    return path


@pytest.fixture
def catalogs(tmp_path: Path) -> Catalogs:
    write_po(tmp_path, "en", "errors", {
        "genai.a": "Hello {name}", "genai.only_en": "English only", "genai.braces": "{missing}"})
    write_po(tmp_path, "ja", "errors", {"genai.a": "こんにちは {name}", "genai.only_en": ""})
    write_po(tmp_path, "pt", "errors", {"genai.a": "Olá {name}"})
    write_po(tmp_path, "en", "commands", {"commands.x": "Command X"})
    write_po(tmp_path, "ja", "chat", {"chat.y": "チャット"})
    return Catalogs(tmp_path)


def test_domain_follows_key_prefix():
    assert domain_for("genai.tips.x") == "errors"
    assert domain_for("commands.keys.add.name") == "commands"
    assert domain_for("chat.fallback_used") == "chat"
    with pytest.raises(ValueError, match="no catalog domain"):
        domain_for("other.key")


def test_discord_locales_become_gettext_names():
    assert normalize_locale("pt-BR") == "pt_BR"
    assert normalize_locale(discord.Locale.american_english) == "en_US"
    assert normalize_locale(None) is None and normalize_locale("  ") is None
    assert locale_candidates("pt-BR") == ["pt_BR", "pt"]
    assert locale_candidates("ja") == ["ja"]


def test_translation_with_params_from_po_without_compiled_catalog(catalogs):
    assert catalogs.t("genai.a", "ja", name="太郎") == "こんにちは 太郎"
    assert catalogs.t("genai.a", discord.Locale.japanese, name="x") == "こんにちは x"
    assert catalogs.t("genai.a", "pt-BR", name="Ana") == "Olá Ana"  # region falls back to language


def test_english_fallback_for_uncatalogued_locale_and_untranslated_entry(catalogs):
    assert catalogs.t("genai.a", "fr", name="Marie") == "Hello Marie"
    assert catalogs.t("genai.a", None, name="Marie") == "Hello Marie"
    assert catalogs.t("genai.a", "en-GB", name="Ann") == "Hello Ann"
    assert catalogs.t("genai.only_en", "ja") == "English only"  # empty msgstr is untranslated
    assert catalogs.t("commands.x", "ja") == "Command X"  # ja has no commands catalog at all


def test_missing_key_shows_the_key_and_bad_params_do_not_raise(catalogs):
    assert catalogs.t("genai.nowhere", "ja") == "genai.nowhere"
    assert catalogs.t("genai.braces", "en") == "{missing}"
    assert catalogs.t("chat.y", "ja") == "チャット"
    assert catalogs.t("chat.y", "en") == "chat.y"


def test_strict_translation_never_falls_back_to_english(catalogs):
    assert catalogs.strict_translation("genai.a", "ja") == "こんにちは {name}"
    assert catalogs.strict_translation("genai.a", "fr") is None
    assert catalogs.strict_translation("genai.only_en", "ja") is None
    assert catalogs.strict_translation("genai.a", "en-US") == "Hello {name}"
    assert catalogs.strict_translation("genai.a", None) is None


def _pybabel() -> str:
    return str(Path(sys.executable).with_name("pybabel"))


def test_compiled_mo_is_used_when_fresh_and_ignored_when_stale(tmp_path):
    po = write_po(tmp_path, "ja", "errors", {"genai.a": "コンパイル済み"})
    mo = po.with_suffix(".mo")
    subprocess.run([_pybabel(), "-q", "compile", "-i", str(po), "-o", str(mo)], check=True)
    write_po(tmp_path, "ja", "errors", {"genai.a": "POの新しい文"})
    old = po.stat().st_mtime
    os.utime(mo, (old + 10, old + 10))  # .mo newer than .po: the compiled file wins
    assert Catalogs(tmp_path).t("genai.a", "ja") == "コンパイル済み"
    os.utime(mo, (old - 10, old - 10))  # edited .po after the build: the .po wins
    assert Catalogs(tmp_path).t("genai.a", "ja") == "POの新しい文"


def test_cache_holds_until_cleared(tmp_path):
    write_po(tmp_path, "en", "errors", {"genai.a": "first"})
    catalogs = Catalogs(tmp_path)
    assert catalogs.t("genai.a") == "first"
    write_po(tmp_path, "en", "errors", {"genai.a": "second"})
    assert catalogs.t("genai.a") == "first"
    catalogs.clear()
    assert catalogs.t("genai.a") == "second"
