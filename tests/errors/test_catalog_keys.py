"""Catalogs and code agree, in every domain: no key used without text, no text nothing uses.

Keys are found as string literals that are exactly a dotted key under bot/, stream/ and
providers/ (a docstring mentioning a key does not count), the keys a command declared by
its key prefix stands for (`localized` and `named`, bot/edge/translator.py), the keys the
settings declarations derive from their names (`bot.capabilities.declared`), plus the keys
the error embed builds itself (the `_personal` forms), taken from its own tables.
A domain is checked once any catalog of it exists; then it must exist in en and ja.
"""

from __future__ import annotations

import ast
import re
import string
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from bot.capabilities.declarations import declared_keys
from bot.errors import possible_keys
from providers.i18n import DOMAINS, Catalogs, domain_for

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("bot", "stream", "providers")
LOCALE_DIR = ROOT / "locales"
REQUIRED_LOCALES = ("en", "ja")
KEY_RE = re.compile(r"(?:genai|commands|chat)\.[a-z0-9_.]+")


def literal_keys(roots: list[Path]) -> dict[str, set[str]]:
    """Key -> files using it, from string constants that are exactly a key and from the
    prefixes commands are declared by."""
    found: dict[str, set[str]] = defaultdict(set)
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            prefixes = _prefix_arguments(tree)
            for key in _declared_keys(tree):
                found[key].add(path.name)
            for node in ast.walk(tree):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in prefixes:
                    value = node.value
                    if KEY_RE.fullmatch(value) and not value.endswith("."):
                        found[value].add(path.name)
    return found


def _called(node: ast.AST, name: str) -> bool:
    """A call of `name` with its prefix written out (translator.py passes one on by name)."""
    index = {"named": 0, "localized": 1}[name]
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
            and len(node.args) > index and isinstance(node.args[index], ast.Constant))


def _prefix_arguments(tree: ast.AST) -> list[ast.Constant]:
    """The prefix strings given to `named(prefix)` and `localized(make, prefix)`."""
    return [node.args[index] for node in ast.walk(tree)
            for name, index in (("named", 0), ("localized", 1)) if _called(node, name)]


def _declared_keys(tree: ast.AST) -> set[str]:
    """`<prefix>.name`/`.description` of each `named` and `localized` prefix, and for a
    `localized` callback each parameter's `commands.param.<key>.name`/`.description` (its
    own name, or the key `params=` gives it), after `self` and the interaction."""
    keys: set[str] = set()
    for node in ast.walk(tree):
        if _called(node, "named"):
            keys |= {f"{node.args[0].value}.name", f"{node.args[0].value}.description"}
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in (d for d in node.decorator_list if _called(d, "localized")):
            prefix = decorator.args[1].value
            overrides = next((ast.literal_eval(k.value) for k in decorator.keywords if k.arg == "params"), {})
            names = [a.arg for a in node.args.args]
            options = names[2:] if names[:1] == ["self"] else names[1:]
            keys |= {f"{prefix}.name", f"{prefix}.description"}
            keys |= {f"commands.param.{overrides.get(name, name)}.{part}"
                     for name in options for part in ("name", "description")}
    return keys


def catalog_entries(locale_dir: Path) -> dict[tuple[str, str], dict[str, str]]:
    """(locale, domain) -> {msgid: msgstr} for every .po file."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    for po in sorted(locale_dir.glob("*/LC_MESSAGES/*.po")):
        with po.open("rb") as fp:
            catalog = read_po(fp)
        out[(po.parts[-3], po.stem)] = {m.id: m.string for m in catalog if m.id and isinstance(m.id, str)}
    return out


def problems(used: set[str], catalogs: dict[tuple[str, str], dict[str, str]]) -> list[str]:
    """Every disagreement between the keys code uses and the catalogs, as readable lines."""
    found: list[str] = []
    domains = {domain for _, domain in catalogs}
    for domain in sorted(domains):
        wanted = {k for k in used if domain_for(k) == domain}
        for locale in REQUIRED_LOCALES:
            entries = catalogs.get((locale, domain))
            if entries is None:
                found.append(f"{locale}/{domain}.po is missing")
                continue
            found += [f"{locale}/{domain}.po lacks {k}" for k in sorted(wanted - entries.keys())]
            found += [f"{locale}/{domain}.po holds unused {k}" for k in sorted(entries.keys() - wanted)]
            found += [f"{locale}/{domain}.po has no text for {k}" for k, v in sorted(entries.items()) if not v]
            found += [f"{locale}/{domain}.po holds {k} of another domain"
                      for k in sorted(entries) if k.split(".")[0] not in DOMAINS or domain_for(k) != domain]
    return found


def used_keys() -> set[str]:
    return set(literal_keys([ROOT / d for d in CODE_DIRS])) | possible_keys() | declared_keys()


def test_code_and_catalogs_agree_in_every_domain():
    assert problems(used_keys(), catalog_entries(LOCALE_DIR)) == []


def test_the_errors_domain_is_covered():
    catalogs = catalog_entries(LOCALE_DIR)
    assert ("en", "errors") in catalogs and ("ja", "errors") in catalogs
    assert possible_keys() <= catalogs[("en", "errors")].keys()


def test_the_checker_reports_missing_unused_and_untranslated_keys(tmp_path):
    code = tmp_path / "pkg"
    code.mkdir()
    (code / "m.py").write_text(
        '"""Mentions genai.tips.in_docstring only."""\n'
        'A = "genai.tips.used"\nB = "genai.tips.missing"\nC = "chat.hello"\nD = "genai.tips."\n'
        '@localized(group.command, "commands.x.set", params={"scope": "where"})\n'
        'async def set_(self, interaction, scope): ...\n'
        'G = Group(**named("commands.x"))\n')
    po = tmp_path / "locales"
    for locale, extra in (("en", 'msgid "genai.tips.unused"\nmsgstr "U"\n'), ("ja", "")):
        path = po / locale / "LC_MESSAGES" / "errors.po"
        path.parent.mkdir(parents=True)
        path.write_text(f'msgid "genai.tips.used"\nmsgstr "{locale}"\n\n{extra}', encoding="utf-8")
    (po / "en" / "LC_MESSAGES" / "chat.po").write_text('msgid "chat.hello"\nmsgstr ""\n', encoding="utf-8")
    used = set(literal_keys([code]))
    assert used == {"genai.tips.used", "genai.tips.missing", "chat.hello", "commands.x.name",
                    "commands.x.description", "commands.x.set.name", "commands.x.set.description",
                    "commands.param.where.name", "commands.param.where.description"}
    assert problems(used, catalog_entries(po)) == [
        "en/chat.po has no text for chat.hello",
        "ja/chat.po is missing",
        "en/errors.po lacks genai.tips.missing",
        "en/errors.po holds unused genai.tips.unused",
        "ja/errors.po lacks genai.tips.missing",
    ]


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_translations_use_the_same_placeholders_as_english():
    catalogs = catalog_entries(LOCALE_DIR)
    mismatched = []
    for (locale, domain), entries in catalogs.items():
        english = catalogs.get(("en", domain), {})
        for key, text in entries.items():
            if key in english and text and _fields(text) != _fields(english[key]):
                mismatched.append(f"{locale}/{domain}: {key}")
    assert mismatched == []


@pytest.mark.parametrize("po", sorted(LOCALE_DIR.glob("*/LC_MESSAGES/*.po")),
                         ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_install_step_compiles_every_catalog_to_the_same_texts(po, tmp_path):
    """`pybabel compile` refuses fuzzy catalogs; the compiled file must say what the .po says."""
    locale, domain = po.parts[-3], po.stem
    target = tmp_path / locale / "LC_MESSAGES" / f"{domain}.mo"
    target.parent.mkdir(parents=True)
    pybabel = str(Path(sys.executable).with_name("pybabel"))
    subprocess.run([pybabel, "-q", "compile", "-i", str(po), "-o", str(target)], check=True)
    assert target.is_file() and target.stat().st_size > 0
    compiled = Catalogs(tmp_path)
    for key, text in catalog_entries(LOCALE_DIR)[(locale, domain)].items():
        assert compiled.strict_translation(key, locale) == text
