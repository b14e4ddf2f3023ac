"""The view methods of ``Tape`` (terminal tree, Graphviz, HTML explorer, JSON, notebooks).

Each delegates to ``dcgraph.views``, imported on first use."""
from __future__ import annotations

__all__ = ["TapeViews"]


class TapeViews:
    def show(self, depth=2, values=True, max_nodes=2000, file=None, width=None, color=None) -> None:
        """Print a ``rich`` tree: kinds coloured, calls nested to ``depth``, loops folded."""
        from ..views.rich_tree import show
        show(self, depth, values, max_nodes, file, width, color)

    def to_dot(self, depth=3, max_nodes=300, highlight=None, values=True) -> str:
        """Graphviz DOT text: nested calls as clusters, data edges solid, control dashed."""
        from ..views.dot import to_dot
        return to_dot(self, depth, max_nodes, highlight, values)

    def to_svg(self, path=None, depth=3, max_nodes=300, highlight=None, values=True):
        """SVG text (also written to ``path`` when given); needs Graphviz's ``dot``."""
        from ..views.dot import to_svg
        return to_svg(self, path, depth, max_nodes, highlight, values)

    def to_html(self, path=None, depth=3, max_nodes=400, highlight=None, title=None) -> str:
        """A self-contained HTML explorer (call tree beside the graph, slices on click)."""
        from ..views.explorer import to_html
        return to_html(self, path, depth, max_nodes, highlight, title)

    def to_json(self, path=None, indent=None, max_array=10_000) -> str:
        """The tape as versioned JSON (``dcgraph.views.jsonio`` documents the schema)."""
        from ..views.jsonio import to_json
        return to_json(self, path, indent, max_array)

    @staticmethod
    def from_json(source) -> "Tape":
        """A tape reopened from JSON text, a dict, or a path."""
        from ..views.jsonio import from_json
        return from_json(source)

    def _repr_svg_(self):
        from ..views.dot import repr_svg
        return repr_svg(self)

    def _repr_html_(self):
        from ..views.html import repr_html
        return repr_html(self)
