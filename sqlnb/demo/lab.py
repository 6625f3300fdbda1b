"""``sqlnb demo`` opens the demo notebook in JupyterLab."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

__all__ = ["launch_lab"]


def launch_lab(notebook: Path, port: int = 8888, open_browser: bool = True) -> int:
    """Run JupyterLab on the notebook (blocks until JupyterLab exits)."""
    if shutil.which("jupyter") is None and not (Path(sys.executable).parent / "jupyter").exists():
        print('JupyterLab is not installed: pip install "sqlnb[lab]"', file=sys.stderr)
        return 2
    jupyter = shutil.which("jupyter") or str(Path(sys.executable).parent / "jupyter")
    # the notebook itself is the server's default page: the browser opens it, and the
    # addresses JupyterLab prints (with --no-browser too) open it rather than the Launcher
    cmd = [
        jupyter,
        "lab",
        notebook.name,
        f"--port={port}",
        f"--ServerApp.root_dir={notebook.parent}",
        f"--ServerApp.default_url=/lab/tree/{quote(notebook.name)}",
    ]
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return subprocess.call(cmd, cwd=notebook.parent)
