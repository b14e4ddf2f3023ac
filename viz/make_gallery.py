"""Render every script in examples/ to SVG and HTML under viz/gallery/, with an index page.

    python viz/make_gallery.py [--examples DIR] [--out DIR]

A script is traced through ``TRACE = (function, args)`` when it defines one, else through a
``main()`` taking no arguments (see viz/README.md). A script that does neither, or fails,
is reported and makes the run exit 1; the others are still rendered.
"""
from __future__ import annotations

import argparse
import html
import importlib.util
import sys
import time
from pathlib import Path

import dcgraph
from dcgraph.views import to_html, to_json, to_svg
from dcgraph.views.fold import subtree_size

HERE = Path(__file__).resolve().parent


def load_trace(path: Path):
    """``(function, args)`` to trace for the example script at ``path``."""
    spec = importlib.util.spec_from_file_location(f"dcgraph_example_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    if hasattr(module, "TRACE"):
        fn, args = module.TRACE
        return fn, tuple(args), module.__doc__
    if callable(getattr(module, "main", None)):
        return module.main, (), module.__doc__
    raise ValueError(f"{path.name} defines neither TRACE = (function, args) nor main()")


def render(path: Path, out: Path) -> dict:
    """Trace one example and write NAME.svg, NAME.html and NAME.json; a summary for the index."""
    fn, args, doc = load_trace(path)
    start = time.perf_counter()
    _result, tape = dcgraph.track(fn, *args)
    name = path.stem
    to_svg(tape, out / f"{name}.svg")
    to_html(tape, out / f"{name}.html", title=f"dcgraph gallery: {name}")
    to_json(tape, out / f"{name}.json")
    return {"name": name, "doc": (doc or "").strip().splitlines()[0] if doc else "",
            "nodes": subtree_size(tape), "seconds": time.perf_counter() - start}


def index_page(entries: list[dict]) -> str:
    rows = "\n".join(
        f'<li><a href="{e["name"]}.html"><img src="{e["name"]}.svg" alt="{e["name"]} graph"></a>'
        f'<div><h2><a href="{e["name"]}.html">{html.escape(e["name"])}</a></h2>'
        f'<p>{html.escape(e["doc"])}</p><p class="meta">{e["nodes"]:,} nodes · '
        f'<a href="{e["name"]}.html">explorer</a> · <a href="{e["name"]}.svg">SVG</a> · '
        f'<a href="{e["name"]}.json">JSON</a></p></div></li>' for e in entries)
    template = (HERE / "gallery_index.html").read_text(encoding="utf-8")
    return template.replace("{{ROWS}}", rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=Path, default=HERE.parent / "examples")
    parser.add_argument("--out", type=Path, default=HERE / "gallery")
    args = parser.parse_args(argv)
    scripts = sorted(args.examples.glob("*.py"))
    if not scripts:
        print(f"make_gallery: no example scripts in {args.examples}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    entries, failed = [], 0
    for path in scripts:
        try:
            entries.append(render(path, args.out))
            print(f"{path.name}: {entries[-1]['nodes']:,} nodes", file=sys.stderr)
        except Exception as exc:            # report and go on with the other examples
            failed += 1
            print(f"make_gallery: {path.name}: {type(exc).__name__}: {exc}", file=sys.stderr)
    (args.out / "index.html").write_text(index_page(entries), encoding="utf-8")
    print(f"wrote {args.out / 'index.html'} ({len(entries)} examples)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
