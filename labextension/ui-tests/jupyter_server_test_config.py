"""Jupyter server configuration for sqlnb's browser tests (Galata).

Never use it outside tests: it removes every security protection (no token, no XSRF).
The sqlnb extension is served from this checkout's build (``sqlnb/labextension``), so the
tests exercise the tree they run in, whether or not the extension is installed in the
environment.
"""

import os
import shutil
import tempfile
from pathlib import Path

import jupyterlab
from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821 (c is the traitlets config)

REPO = Path(__file__).resolve().parents[2]

c.ServerApp.ip = "127.0.0.1"  # noqa: F821
c.ServerApp.port = int(os.environ.get("SQLNB_UI_PORT", "8888"))  # noqa: F821
c.ServerApp.allow_root = True  # noqa: F821
# Galata's helper extension, then this checkout's sqlnb build. The server looks up an
# extension's files as <path>/<package name>/..., so the build is copied as "sqlnb" into a
# directory of its own; the first directory naming an extension wins over an installed
# copy. A copy, not a link: a rebuild during the run cannot pull files from under the page.
_build = REPO / "sqlnb" / "labextension"
if not (_build / "package.json").exists():
    raise SystemExit(
        f"sqlnb's browser tests: the extension is not built ({_build} is missing); "
        "build it first: cd labextension && jlpm install && jlpm build:prod"
    )
_extensions = Path(tempfile.mkdtemp(prefix="sqlnb-ui-labextensions-"))
shutil.copytree(_build, _extensions / "sqlnb")
c.LabServerApp.extra_labextensions_path = [  # noqa: F821
    str(Path(jupyterlab.__file__).parent / "galata"),
    str(_extensions),
]
# The kernels' sqlnb home (the memory store of remembered answers): a fresh directory per
# server, never the user's ~/.sqlnb. Kernels inherit the server's environment.
os.environ["SQLNB_HOME"] = tempfile.mkdtemp(prefix="sqlnb-ui-home-")
# ... and an empty offline-model folder: a model downloaded on this machine (llama.cpp is
# installed with the test dependencies) never answers in place of a test's scripted one.
os.environ["SQLNB_MODEL_DIR"] = tempfile.mkdtemp(prefix="sqlnb-ui-models-")
# No terminals or news checks in tests.
c.ServerApp.terminals_enabled = False  # noqa: F821
c.LabApp.news_url = None  # noqa: F821
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"  # noqa: F821
# Notebook 7's page exposes its app too (window.jupyterapp), for the tests' waits.
c.JupyterNotebookApp.expose_app_in_browser = True  # noqa: F821
