"""Where the classic BUGS examples are: ``$DCGRAPH_BUGS_EXAMPLES``, else ``../shared/bugs-examples``
beside the repository (as CI lays it out). Tests that need them skip, saying so, when absent."""
import os
import pathlib

import pytest

EXAMPLES = pathlib.Path(os.environ.get("DCGRAPH_BUGS_EXAMPLES") or
                        pathlib.Path(__file__).resolve().parents[3] / "shared" / "bugs-examples")
if not EXAMPLES.is_dir():
    pytest.skip(f"the BUGS examples are not at {EXAMPLES} (set DCGRAPH_BUGS_EXAMPLES)",
                allow_module_level=True)
