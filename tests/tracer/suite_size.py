"""How big the generated suites run: ``DCGRAPH_SUITE_SIZE=small`` (what ``make test-versions``
sets on the interpreters after the first) runs a quarter of the generated programs. Every program
and corpus case is still warm-run 120 times: the adaptive interpreter specialises during those
runs, and that is what the suites check."""
import os

SMALL = os.environ.get("DCGRAPH_SUITE_SIZE", "full") == "small"


def examples(full: int) -> int:
    """The number of generated examples for a suite whose full size is ``full``."""
    return max(10, full // 4) if SMALL else full
