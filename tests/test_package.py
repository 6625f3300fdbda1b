"""The package as a whole: its version is written once, and importing one layer does not
load another."""

from __future__ import annotations

import json
import re
from pathlib import Path

import sqlnb
from sqlnb._version import __version__

ROOT = Path(__file__).resolve().parents[1]

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib


def test_the_version_is_written_once():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" in pyproject["project"]["dynamic"] and "version" not in pyproject["project"]
    assert pyproject["tool"]["hatch"]["version"]["path"] == "sqlnb/_version.py"
    assert re.fullmatch(r"\d+\.\d+\.\d+(\S*)", __version__)
    assert sqlnb.__version__ == __version__
    # the JupyterLab extension ships in the same wheel, with the same version
    package = json.loads((ROOT / "labextension" / "package.json").read_text())
    assert package["version"] == __version__
    # and says it in its hello (labextension/src/bridge.ts)
    bridge_ts = (ROOT / "labextension" / "src" / "bridge.ts").read_text()
    assert re.search(r"CLIENT_VERSION = '([^']+)'", bridge_ts).group(1) == __version__


def test_the_installed_distribution_has_that_version():
    """What pip installed (its metadata, read by ``pip show`` and the benchmarks) says it too."""
    from importlib import metadata

    assert metadata.version("sqlnb") == __version__


def _loaded_after(imports: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules starting with one of ``prefixes`` that a fresh Python has loaded after
    ``imports``."""
    import subprocess
    import sys

    code = (
        f"import json, sys\n{imports}\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_importing_the_agent_or_the_bridge_loads_no_other_layer():
    """The package root imports only its version: the agent loads no IPython, magic or bridge,
    and the panel's bridge no adapter (import-linter checks the imports as written; this,
    what an import actually loads)."""
    agent = "import sqlnb.agent.runner, sqlnb.agent.models, sqlnb.agent.download"
    assert _loaded_after(agent, ("IPython", "ipywidgets", "sqlnb.magics", "sqlnb.bridge", "sqlnb.cli")) == []
    bridge = "import sqlnb.bridge.comm, sqlnb.bridge.runs, sqlnb.bridge.widget"
    assert _loaded_after(bridge, ("sqlnb.adapters", "sqlnb.display", "sqlnb.magics")) == []
