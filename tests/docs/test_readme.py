"""The README fits on a screen or two, starts with the quick start, and every relative link
in it and in docs/ leads to a page (and a heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def prose(path: Path) -> str:
    """The page without fenced code blocks and code spans, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"), flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", path.read_text(encoding="utf-8"),
                                                   flags=re.S | re.M), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def relative_links(path: Path) -> list[str]:
    return [target for target in LINK.findall(prose(path))
            if not re.match(r"[a-z]+:", target)]


def test_the_readme_fits_on_a_screen_or_two() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 250


def test_the_quick_start_is_in_the_first_60_lines() -> None:
    top = "\n".join(README.read_text(encoding="utf-8").splitlines()[:60])
    for needed in ("make run", "DISCORD_TOKEN", "Message Content", "invite"):
        assert needed in top, needed


def test_the_readme_keeps_the_test_command_ci_runs() -> None:
    """.ci/run runs the README's test command: `make test`."""
    assert any(line.startswith("make test") for line in README.read_text(encoding="utf-8").splitlines())


def test_every_relative_link_leads_to_a_page_and_heading_that_exist() -> None:
    broken = []
    for page in PAGES:
        for target in relative_links(page):
            file_part, _, anchor = target.partition("#")
            linked = (page.parent / file_part).resolve() if file_part else page
            if not linked.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken, broken


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in relative_links(README)}
    orphans = [page.name for page in PAGES[1:] if page.resolve() not in linked]
    assert not orphans, orphans
