"""The README's links stay inside the repository: a clone has everything it points at."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_readme_links_resolve_inside_the_repository():
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(([^)#]+)\)", text)
    assert "DESIGN.md" in targets
    for target in targets:
        if "://" in target:
            continue
        path = (ROOT / target).resolve()
        assert path.is_relative_to(ROOT), f"README links outside the repository: {target}"
        assert path.exists(), f"README links a missing file: {target}"
    assert "../shared" not in text
