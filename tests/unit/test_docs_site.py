"""The documentation is a site that builds, and the README is its front door (issue 41).

`mkdocs build --strict` with mkdocs.yml's validation settings fails on a link to a page that
does not exist, an anchor no page has, a link out of docs/, and a page left out of the nav.
The README is read on GitHub and PyPI, outside the site: it stays short, and each of its
relative links names a file of the checkout."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
README_MAX_LINES = 160

FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    # the venv's own mkdocs (the test extras install it), not whatever PATH finds
    mkdocs = Path(sys.executable).parent / "mkdocs"
    assert mkdocs.exists(), f"{mkdocs} is missing: install the test extras (pip install -e '.[test]')"
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "index.html").is_file()


def test_the_readme_is_short() -> None:
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, (
        f"README.md has {len(lines)} lines (at most {README_MAX_LINES}): move the detail to docs/")


def relative_links(markdown: str) -> list[str]:
    """The targets of Markdown links and images outside code blocks that name no scheme."""
    prose = FENCE.sub("", markdown)
    targets = [m.group(1) for m in LINK.finditer(prose)]
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.IGNORECASE)
            and not t.startswith("#")]


def test_every_relative_link_of_the_readme_names_a_file() -> None:
    links = relative_links(README.read_text())
    assert links, "README.md links into docs/"
    missing = [link for link in links
               if not (ROOT / link.split("#", 1)[0]).exists()]
    assert not missing, f"README.md links to files that do not exist: {missing}"


def test_the_link_reader_sees_links_and_skips_code() -> None:
    text = ("[a](docs/a.md) ![b](docs/img/b.png \"t\") [c](https://x.io/c) [d](#d)\n"
            "```sh\n[e](not/a/link.md)\n```\n[f](docs/f.md#part)")
    assert relative_links(text) == ["docs/a.md", "docs/img/b.png", "docs/f.md#part"]


def test_the_architecture_page_lists_the_layers_of_the_import_contract() -> None:
    contract = (ROOT / ".importlinter").read_text().split("layers =", 1)[1]
    layers = [line.strip().removeprefix("dbabench.") for line in contract.splitlines()
              if line.strip().startswith("dbabench.")]
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("<!-- layers: the order of .importlinter -->", 1)[1].split(
        "<!-- /layers -->", 1)[0]
    listed = re.findall(r"^\| `(\w+)` \|", table, re.MULTILINE)
    assert listed == layers, "docs/architecture.md lists the layers of .importlinter, in order"
