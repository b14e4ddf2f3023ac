"""Views of a tape: terminal tree, Graphviz, HTML explorer, JSON (see issue #4).

``Tape`` methods delegate here; every view folds large tapes (``fold``) with visible
"… n more" markers instead of dropping nodes.
"""
from .dot import GraphvizNotFound, repr_svg, to_dot, to_svg
from .explorer import to_html
from .fold import Fold, Row, fold
from .html import repr_html
from .jsonio import from_json, to_json
from .rich_tree import render_tree, show

__all__ = ["show", "render_tree", "to_dot", "to_svg", "repr_svg", "GraphvizNotFound",
           "to_html", "repr_html", "to_json", "from_json", "fold", "Row", "Fold"]
