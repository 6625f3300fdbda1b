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


def test_the_installed_distribution_has_that_version():
    """What pip installed (its metadata, read by ``pip show`` and the benchmarks) says it too."""
    from importlib import metadata

    assert metadata.version("sqlnb") == __version__
