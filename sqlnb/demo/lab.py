"""``sqlnb demo`` opens the demo notebook in JupyterLab."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

__all__ = ["lab_command", "launch_lab"]


def lab_command(notebook: Path, port: int = 8888, open_browser: bool = True) -> list[str] | None:
    """The ``jupyter lab`` command that opens ``notebook`` (None: JupyterLab is not installed).

    The notebook itself is JupyterLab's default page: the browser opens it, and so do the
    addresses JupyterLab prints (with ``--no-browser`` too), rather than the Launcher."""
    jupyter = shutil.which("jupyter") or str(Path(sys.executable).parent / "jupyter")
    if not Path(jupyter).exists():
        return None
    cmd = [
        jupyter,
        "lab",
        notebook.name,
        f"--port={port}",
        f"--ServerApp.root_dir={notebook.parent}",
        f"--LabApp.default_url=/lab/tree/{quote(notebook.name)}",
    ]
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def launch_lab(notebook: Path, port: int = 8888, open_browser: bool = True) -> int:
    """Run JupyterLab on the notebook (blocks until JupyterLab exits)."""
    cmd = lab_command(notebook, port, open_browser)
    if cmd is None:
        print('JupyterLab is not installed: pip install "sqlnb[lab]"', file=sys.stderr)
        return 2
    print(f"Opening {notebook.name} in JupyterLab (the addresses below open it; Ctrl+C stops JupyterLab).")
    return subprocess.call(cmd, cwd=notebook.parent)
