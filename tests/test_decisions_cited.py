"""Every citation of the rule readings points into the repository: docs/DECISIONS.md and
a section that is there (`docs/DECISIONS.md "Run Wild"`; inside docs/, `DECISIONS.md
"Run Wild"`). The code and docs once cited a DECISIONS.md about 90 times that the
repository did not hold."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DECISIONS = ROOT / "docs" / "DECISIONS.md"
FOLDERS = ("cli", "client", "headless", "server", "protocol", "web", "tests", "bench", "docs")
SUFFIXES = (".py", ".md", ".js", ".html", ".json", ".txt")
CITATION = re.compile(r'(?P<docs>docs/)?DECISIONS\.md "(?P<section>[^"]+)"')
# docs/RULES.md may name the whole page once, as a link, and links each citation to its section
WHOLE = "[DECISIONS.md](DECISIONS.md)"
LINK = re.compile(r'\[(?P<cite>DECISIONS\.md "(?P<section>[^"]+)")\]\(DECISIONS\.md#(?P<anchor>[^)]*)\)')


def anchor(section: str) -> str:
    """A heading's anchor as GitHub makes it: "Go Wild!" -> "go-wild"."""
    return re.sub(r"[^\w\- ]", "", section.lower()).replace(" ", "-")


def sections(text: str) -> set[str]:
    return {line[3:].strip() for line in text.splitlines() if line.startswith("## ")}


def bad_citations(path: Path, text: str, known: set[str]) -> list[str]:
    """Each mention of DECISIONS in ``text`` that is not a citation of a known section."""
    in_docs = path.parent.name == "docs"
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        rest = line
        if in_docs:
            for mo in LINK.finditer(line):
                if mo["anchor"] != anchor(mo["section"]):
                    out.append(f"{path.name}:{n}: the link to {mo['section']!r} goes to #{mo['anchor']}")
            rest = LINK.sub(lambda mo: mo["cite"], line.replace(WHOLE, ""))
        cited = list(CITATION.finditer(rest))
        for mo in cited:
            if mo["section"] not in known:
                out.append(f"{path.name}:{n}: no section {mo['section']!r} in docs/DECISIONS.md")
            elif not in_docs and not mo["docs"]:
                out.append(f"{path.name}:{n}: outside docs/, cite it as docs/DECISIONS.md")
        if CITATION.sub("", rest).count("DECISIONS"):
            out.append(f"{path.name}:{n}: DECISIONS named without a section: {line.strip()[:80]}")
    return out


def test_decisions_is_in_the_repository():
    assert {"All games", "Run Wild", "Go Wild!", "Wild Shots", "Go Fish Wildcard"} <= sections(DECISIONS.read_text())


def test_every_citation_names_a_section_there():
    known = sections(DECISIONS.read_text())
    found, bad = 0, []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in SUFFIXES or path == DECISIONS or path == Path(__file__) or not path.is_file():
                continue
            text = path.read_text(errors="replace")
            found += len(CITATION.findall(text))
            bad += bad_citations(path, text, known)
    assert bad == []
    assert found > 100       # the engines and docs/RULES.md cite it throughout


def test_the_check_fails_on_what_it_should():
    known = {"Run Wild"}
    code = Path("protocol/games/x.py")
    assert bad_citations(code, 'x  # docs/DECISIONS.md "Run Wild": "2 to 4 players"', known) == []
    assert bad_citations(code, "x  # DECISIONS: 2 to 4 players", known)
    assert bad_citations(code, "x  # DECISIONS.md: 2 to 4 players", known)
    assert bad_citations(code, 'x  # DECISIONS.md "Run Wild": outside docs/', known)
    assert bad_citations(code, 'x  # docs/DECISIONS.md "Runwild"', known)
    rules = Path("docs/RULES.md")
    assert bad_citations(rules, 'as [DECISIONS.md "Run Wild"](DECISIONS.md#run-wild) says', known) == []
    assert bad_citations(rules, 'as [DECISIONS.md "Run Wild"](DECISIONS.md#go-wild) says', known)
    assert anchor("Go Wild!") == "go-wild"
