"""``python -m dcgraph`` and the ``dcgraph`` script: see ``dcgraph.cli``."""
from .cli import main

__all__ = ["main"]

if __name__ == "__main__":
    raise SystemExit(main())
