"""A model file is complete or it is not there: bytes are written to ``<file>.part`` while
their sha256 is computed, checked against the registered size and sha256, and only then
renamed into place, with a ``<file>.sha256`` sidecar so a later check need not read the file
again."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from sqlnb.agent.download import progress as bars
from sqlnb.agent.download.catalog import ModelSpec
from sqlnb.agent.download.progress import Progress
from sqlnb.errors import ModelDownloadError

__all__ = ["CHUNK", "PartWriter", "Readable", "already_there", "check_written", "install", "sha256_of"]

CHUNK = 8 * 1024 * 1024


class Readable(Protocol):
    """Anything :meth:`PartWriter.copy_from` reads: a file, a zip member."""

    def read(self, size: int = -1, /) -> bytes: ...


def _sidecar(final: Path) -> Path:
    return final.with_name(final.name + ".sha256")


def already_there(spec: ModelSpec, final: Path, say: Progress) -> bool:
    """Whether ``final`` is the model's verified file (checked once more when its sidecar is
    missing; a wrong file is reported and left to be downloaded again)."""
    try:
        size = final.stat().st_size
    except FileNotFoundError:
        return False
    if size != spec.size:
        say(f"{final.name} has {size:,} bytes, expected {spec.size:,}; downloading it again")
        return False
    sidecar = _sidecar(final)
    try:
        if sidecar.read_text().split()[0].lower() == spec.sha256:
            return True
    except (OSError, IndexError):
        pass
    say(f"verifying {final.name} ...")
    digest = sha256_of(final, f"verifying {final.name}")
    if digest.hexdigest() != spec.sha256:
        say(f"{final.name} is corrupt (sha256 {digest.hexdigest()}); downloading it again")
        return False
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...)")
    return True


def sha256_of(path: Path, desc: str) -> Any:
    """The sha256 of a file, read with a progress bar."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh, bars.progress_bar(path.stat().st_size, desc) as bar:
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
            bar.update(len(chunk))
    return digest


def _write_sidecar(spec: ModelSpec, final: Path) -> None:
    sidecar = _sidecar(final)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(f"{spec.sha256}  {final.name}\n")
    os.replace(tmp, sidecar)


class PartWriter:
    """Streams bytes into the .part file, hashing, with a progress bar and a line every
    ~10 % (for logs, where a bar does not show)."""

    def __init__(self, path: Path, total: int, say: Progress, label: str):
        self.path, self.total, self.say, self.label = path, total, say, label
        self.digest = hashlib.sha256()
        self.written = 0
        self._next_report = 10
        # kept open across copy_from calls, closed by close() or abort(); overwrites any earlier
        # partial download
        self._fh: BinaryIO = open(path, "wb")  # noqa: SIM115
        self._bar = bars.progress_bar(total, label)

    def copy_from(self, source: Readable) -> None:
        while chunk := source.read(CHUNK):
            self._fh.write(chunk)
            self.digest.update(chunk)
            self.written += len(chunk)
            self._bar.update(len(chunk))
            percent = self.written * 100 // self.total if self.total else 100
            if percent >= self._next_report:
                self.say(
                    f"{self.label}: {min(percent, 100)}% "
                    f"({self.written / 1e6:,.0f} of {self.total / 1e6:,.0f} MB)"
                )
                self._next_report = (percent // 10 + 1) * 10

    def close(self) -> None:
        self._bar.close()
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def abort(self) -> None:
        self._bar.close()
        self._fh.close()
        self.path.unlink(missing_ok=True)


def check_written(spec: ModelSpec, writer: PartWriter, source: str) -> None:
    """Refuse (and delete) what ``writer`` wrote unless it has the model's size and sha256."""
    problem = None
    if writer.written != spec.size:
        problem = f"{writer.written:,} bytes, expected {spec.size:,}"
    elif writer.digest.hexdigest() != spec.sha256:
        problem = f"sha256 {writer.digest.hexdigest()}, expected {spec.sha256}"
    if problem:
        writer.abort()
        raise ModelDownloadError(
            f"{source} gave a bad file for {spec.name} ({problem}); it was deleted",
            hint="run the download again; if it keeps failing the source is corrupt or "
            "has changed, so report it",
        )


def install(spec: ModelSpec, part: Path, final: Path, say: Progress) -> Path:
    """Rename the verified ``part`` into place and write its sidecar."""
    os.replace(part, final)
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...) -> {final}")
    return final
