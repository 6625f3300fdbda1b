"""Model resolution (every spec form and its errors), the scripted model and ModelClient.

No hosted LLM is contacted: provider models are only constructed, never called.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
import threading
import time
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from sqlnb import errors
from sqlnb.agent import models
from sqlnb.agent.models import (
    DEFAULT_ANTHROPIC_MODEL,
    LlamaCppChatModel,
    ModelClient,
    ScriptedChatModel,
    describe_model,
    llamacpp,
    resolve_model,
    scrub_secrets,
)
from sqlnb.agent.models.overflow import context_too_long
from tests.doubles import script_file


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in ("SQLNB_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "SQLNB_LLAMA_THREADS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SQLNB_MODEL_DIR", str(tmp_path / "models"))


@pytest.fixture
def script(tmp_path):
    """Write a scripted model's file as given (tests/doubles.py); return its path."""
    return functools.partial(script_file, tmp_path)


# --- resolution -------------------------------------------------------------------------
@pytest.fixture
def fake_llama_cpp(tmp_path, monkeypatch):
    """An importable ``llama_cpp`` (a stand-in: the real runtime is not needed to tell
    whether the offline model is installed, and resolving never loads the model)."""
    root = tmp_path / "fake-site"
    (root / "llama_cpp").mkdir(parents=True)
    (root / "llama_cpp" / "__init__.py").write_text("__version__ = '0.0-test'\n")
    real = sys.modules.pop("llama_cpp", None)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield root
    # the stand-in never stays imported: later tests run the real runtime
    sys.modules.pop("llama_cpp", None)
    if real is not None:
        sys.modules["llama_cpp"] = real


@pytest.fixture
def no_llama_cpp(monkeypatch):
    """llama_cpp not importable, even where the real one is installed."""
    monkeypatch.setitem(sys.modules, "llama_cpp", None)


@pytest.fixture
def offline_file(tmp_path):
    """The default offline model's file in the model directory (a few bytes stand in for it)."""
    path = tmp_path / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF")
    return path


def test_no_model_configured_says_how_in_one_line(no_llama_cpp):
    with pytest.raises(errors.ModelNotConfigured) as info:
        resolve_model()
    err = info.value
    assert isinstance(err, errors.ConfigurationError)
    assert err.kind == "model_not_configured"
    text = str(err)
    assert "\n" not in text
    for needle in (
        "no language model is configured",
        "ANTHROPIC_API_KEY",
        "`sqlnb demo --offline`",
        '%config AskMagic.model = "provider:model"',
        "SQLNB_MODEL",
        "--model",
        "llamacpp:qwen2.5-coder-1.5b",
    ):
        assert needle in text, needle
    assert "scripted" not in text  # the test model is no choice for users


def test_offline_model_is_used_when_installed(fake_llama_cpp, offline_file):
    model = resolve_model()
    assert isinstance(model, LlamaCppChatModel)
    assert model.model_path == str(offline_file)
    assert describe_model(model) == "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m"


def test_offline_model_needs_the_runtime(no_llama_cpp, offline_file):
    with pytest.raises(errors.ModelNotConfigured, match="sqlnb demo --offline"):
        resolve_model()


def test_offline_model_needs_the_file(fake_llama_cpp):
    with pytest.raises(errors.ModelNotConfigured, match="sqlnb demo --offline"):
        resolve_model()


def test_a_key_comes_before_the_offline_model(monkeypatch, fake_llama_cpp, offline_file):
    from langchain_anthropic import ChatAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-000000")
    assert isinstance(resolve_model(), ChatAnthropic)


def test_sqlnb_model_comes_first(monkeypatch, script, fake_llama_cpp, offline_file):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-000000")
    monkeypatch.setenv("SQLNB_MODEL", f"scripted:{script(['hello'])}")
    assert isinstance(resolve_model(), ScriptedChatModel)
    # an explicit spec (%config AskMagic.model, --model) comes before everything
    model = resolve_model("openai:gpt-4o-mini?base_url=http://127.0.0.1:9/v1")
    assert describe_model(model) == "openai:gpt-4o-mini"


def test_error_kinds_registered():
    for cls in (
        errors.ModelError,
        errors.ModelNotConfigured,
        errors.ScriptExhausted,
        errors.ContextTooLong,
        errors.ModelDownloadError,
    ):
        assert errors.ERROR_KINDS[cls.kind] is cls
    assert issubclass(errors.ScriptExhausted, errors.ModelError)
    assert issubclass(errors.ContextTooLong, errors.ModelError)


def test_sqlnb_model_env_is_used(monkeypatch, script):
    monkeypatch.setenv("SQLNB_MODEL", f"scripted:{script(['hello'])}")
    model = resolve_model()
    assert isinstance(model, ScriptedChatModel)
    assert model.replies == ["hello"]
    # an explicit spec wins over the environment
    other = resolve_model(f"scripted:{script(['x', 'y'], 'other.json')}")
    assert other.replies == ["x", "y"]


def test_anthropic_default_with_key(monkeypatch):
    from langchain_anthropic import ChatAnthropic

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key-000000")
    model = resolve_model(timeout=12.0)
    assert DEFAULT_ANTHROPIC_MODEL == "anthropic:claude-sonnet-4-5"
    assert isinstance(model, ChatAnthropic)
    assert model.model == "claude-sonnet-4-5"
    assert model.temperature == 0.0
    assert model.max_retries == 0
    assert model.default_request_timeout == 12.0
    assert describe_model(model) == "anthropic:claude-sonnet-4-5"


def test_anthropic_without_key_is_not_configured():
    with pytest.raises(errors.ModelNotConfigured, match="ANTHROPIC_API_KEY"):
        resolve_model("anthropic:claude-sonnet-4-5")


def test_openai_compatible_server_with_base_url():
    from langchain_openai import ChatOpenAI

    model = resolve_model("openai:gpt-4o-mini", base_url="http://127.0.0.1:8080/v1", timeout=5.0)
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:8080/v1"
    assert model.model_name == "gpt-4o-mini"
    assert model.request_timeout == 5.0
    assert model.max_retries == 0
    assert describe_model(model) == "openai:gpt-4o-mini"


def test_options_in_the_spec_string(monkeypatch):
    """What %config AskMagic.model / SQLNB_MODEL can say for an OpenAI-compatible server."""
    from langchain_openai import ChatOpenAI

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    model = resolve_model("openai:qwen2.5-coder?base_url=http://127.0.0.1:8000/v1")
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://127.0.0.1:8000/v1" and model.model_name == "qwen2.5-coder"


def test_openai_without_key_or_base_url_says_which_variable():
    with pytest.raises(errors.ConfigurationError) as info:
        resolve_model("openai:gpt-4o-mini")
    assert "OPENAI_API_KEY" in info.value.hint


def test_unknown_provider():
    with pytest.raises(errors.ConfigurationError) as info:
        resolve_model("nosuchprovider:some-model")
    assert "unknown model provider 'nosuchprovider'" in info.value.message
    assert "anthropic" in info.value.hint and "llamacpp" in info.value.hint


@pytest.mark.skipif(
    importlib.util.find_spec("langchain_ollama") is not None, reason="langchain-ollama is installed"
)
def test_missing_integration_package_names_it():
    with pytest.raises(errors.MissingDriverError) as info:
        resolve_model("ollama:qwen2.5-coder")
    assert info.value.hint == "pip install langchain-ollama"


@pytest.mark.parametrize("spec", ["claude-sonnet-4-5", "anthropic:", ":gpt-4o", "  "])
def test_spec_without_provider_and_model(spec, monkeypatch):
    if not spec.strip():  # blank means "not given"
        with pytest.raises(errors.ModelNotConfigured):
            resolve_model(spec)
        return
    with pytest.raises(errors.ConfigurationError, match="provider:model"):
        resolve_model(spec)


def test_scripted_file_errors(script, tmp_path):
    with pytest.raises(errors.ConfigurationError, match="does not exist"):
        resolve_model(f"scripted:{tmp_path / 'missing.json'}")
    with pytest.raises(errors.ConfigurationError, match=r"not valid JSON: .* line 1"):
        resolve_model("scripted:" + script('["a",'))
    with pytest.raises(errors.ConfigurationError, match="holds a JSON dict, not a list"):
        resolve_model(f"scripted:{script({'answers': ['a']})}")
    with pytest.raises(errors.ConfigurationError, match="reply 2 is a JSON int"):
        resolve_model(f"scripted:{script(['a', 3])}")
    with pytest.raises(errors.ConfigurationError, match="draft 1 is a JSON int"):
        resolve_model(f"scripted:{script({'replies': ['a'], 'drafts': [1]})}")


def test_scripted_file_with_drafts(script):
    """Sampled calls (a temperature given) take the drafts, other calls the replies."""
    model = resolve_model(f"scripted:{script({'replies': ['r1', 'r2'], 'drafts': ['d1']})}")
    client = ModelClient(model)
    assert client.samples
    assert client.invoke("q")[0] == "r1"
    assert client.invoke("q", temperature=0.7, seed=3)[0] == "d1"
    assert client.invoke("q")[0] == "r2"
    with pytest.raises(errors.ScriptExhausted, match="no draft left"):
        client.invoke("q", temperature=0.7)
    assert len(model.prompts) == 2 and len(model.draft_prompts) == 2
    plain = resolve_model(f"scripted:{script(['only'])}")
    assert not ModelClient(plain).samples  # a list of replies does not sample
    assert ModelClient(plain).invoke("q", temperature=0.7)[0] == "only"


def test_scripted_relative_path(script, tmp_path, monkeypatch):
    script(["ok"], "rel.json")
    monkeypatch.chdir(tmp_path)
    model = resolve_model("scripted:rel.json")
    assert describe_model(model) == "scripted:rel.json"


def test_llamacpp_missing_file_hints_download():
    with pytest.raises(errors.ConfigurationError) as info:
        resolve_model("llamacpp:qwen2.5-coder-1.5b")
    assert info.value.hint == "sqlnb model download qwen2.5-coder-1.5b"
    with pytest.raises(errors.ConfigurationError) as info:
        resolve_model("llamacpp:/nowhere/model.gguf")
    assert "sqlnb model download qwen2.5-coder-1.5b" in info.value.hint


def test_llamacpp_resolves_downloaded_name(tmp_path):
    # a file in the model directory is found by registry name, file name or stem
    folder = tmp_path / "models"
    folder.mkdir()
    gguf = folder / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    gguf.write_bytes(b"GGUF")
    for spec in (
        "llamacpp:qwen2.5-coder-1.5b",
        f"llamacpp:{gguf}",
        "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m",
    ):
        if importlib.util.find_spec("llama_cpp") is None:
            with pytest.raises(errors.MissingDriverError) as info:
                resolve_model(spec)
            assert info.value.hint == "pip install 'sqlnb[local]'"
        else:
            model = resolve_model(spec, n_ctx=2048, max_tokens=64)
            assert isinstance(model, LlamaCppChatModel)
            assert model.model_path == str(gguf)
            assert (model.n_ctx, model.max_tokens, model.temperature) == (2048, 64, 0.0)
            assert describe_model(model) == "llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m"


def test_llamacpp_threads_default(monkeypatch):
    model = LlamaCppChatModel(model_path="x.gguf")
    assert 1 <= model.n_threads <= 4
    monkeypatch.setenv("SQLNB_LLAMA_THREADS", "1")
    assert LlamaCppChatModel(model_path="x.gguf").n_threads == 1


# --- the scripted model -------------------------------------------------------------------
def test_scripted_replies_in_order_and_records_prompts():
    model = ScriptedChatModel(replies=["first reply", "second"])
    prompt = [SystemMessage("You write SQL."), HumanMessage("How many users?")]
    first = model.invoke(prompt)
    assert first.content == "first reply"
    assert first.usage_metadata == {
        "input_tokens": len("You write SQL.How many users?") // 4,
        "output_tokens": len("first reply") // 4,
        "total_tokens": len("You write SQL.How many users?") // 4 + len("first reply") // 4,
    }
    second = model.invoke([*prompt, AIMessage("first reply"), HumanMessage("again")])
    assert second.content == "second"
    assert model.prompts == [
        [("system", "You write SQL."), ("user", "How many users?")],
        [
            ("system", "You write SQL."),
            ("user", "How many users?"),
            ("assistant", "first reply"),
            ("user", "again"),
        ],
    ]
    assert model.remaining == 0
    with pytest.raises(errors.ScriptExhausted) as info:
        model.invoke("one more")
    assert info.value.kind == "script_exhausted"
    assert "all 2 replies" in info.value.message
    assert len(model.prompts) == 3  # the failed call's prompt is recorded too


# --- ModelClient --------------------------------------------------------------------------
class FlakyModel(BaseChatModel):
    """Raises ``error`` on the first ``failures`` calls, then answers."""

    failures: int = 0
    error: Any = None
    calls: int = 0
    delay: float = 0.0
    gate: Any = None  # a threading.Event the call waits for

    @property
    def _llm_type(self) -> str:
        return "flaky"

    def _generate(self, messages: list[BaseMessage], stop=None, run_manager=None, **kwargs) -> ChatResult:
        self.calls += 1
        if self.delay:
            time.sleep(self.delay)
        if self.gate is not None:
            self.gate.wait(60)
        if self.calls <= self.failures:
            raise self.error
        message = AIMessage(
            "SELECT 42", usage_metadata={"input_tokens": 10, "output_tokens": 3, "total_tokens": 13}
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


class AuthenticationError(Exception):
    """Named like anthropic's/openai's: recognized by class name, no import needed."""


def test_client_returns_text_and_usage():
    client = ModelClient(ScriptedChatModel(replies=["```sql\nSELECT 1\n```"], source="replies.json"))
    assert client.name == "scripted:replies.json"
    text, usage = client.invoke([HumanMessage("q" * 40)])
    assert text == "```sql\nSELECT 1\n```"
    assert set(usage) == {"input_tokens", "output_tokens", "total_tokens", "calls", "seconds"}
    assert usage["input_tokens"] == 10 and usage["calls"] == 1
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert isinstance(usage["seconds"], float) and usage["seconds"] >= 0


def test_client_retries_with_backoff():
    delays: list[float] = []
    model = FlakyModel(failures=2, error=ConnectionError("connection reset"))
    client = ModelClient(model, retries=2, backoff=1.5, sleep=delays.append)
    text, usage = client.invoke("q")
    assert text == "SELECT 42"
    assert model.calls == 3
    assert delays == [1.5, 3.0]
    assert usage == {**usage, "input_tokens": 10, "output_tokens": 3, "total_tokens": 13, "calls": 1}


def test_client_backoff_is_capped():
    delays: list[float] = []
    model = FlakyModel(failures=7, error=TimeoutError("slow"))
    ModelClient(model, retries=7, backoff=4, sleep=delays.append).invoke("q")
    assert delays == [4, 8, 16, 30, 30, 30, 30]


def test_client_gives_up_after_retries():
    delays: list[float] = []
    model = FlakyModel(failures=10, error=ConnectionError("upstream 529 overloaded"))
    client = ModelClient(model, retries=2, backoff=1.0, sleep=delays.append)
    with pytest.raises(errors.ModelError) as info:
        client.invoke("q")
    assert model.calls == 3 and delays == [1.0, 2.0]
    message = info.value.message
    assert message.startswith("flaky failed after 3 attempts")
    assert "ConnectionError: upstream 529 overloaded" in message
    assert info.value.hint


def test_client_does_not_retry_script_exhausted():
    delays: list[float] = []
    client = ModelClient(ScriptedChatModel(replies=[]), sleep=delays.append)
    with pytest.raises(errors.ScriptExhausted):
        client.invoke("q")
    assert delays == []


def test_client_does_not_retry_auth_errors():
    delays: list[float] = []
    model = FlakyModel(failures=5, error=AuthenticationError("invalid x-api-key"))
    with pytest.raises(errors.ModelError) as info:
        ModelClient(model, sleep=delays.append).invoke("q")
    assert model.calls == 1 and delays == []
    assert "refused the request" in info.value.message
    assert "API key" in info.value.hint


class BadRequestError(Exception):
    """Named like anthropic's/openai's 400."""


@pytest.mark.parametrize(
    "message, requested, window",
    [
        ("Requested tokens (9348) exceed context window of 8192", 9348, 8192),
        ("prompt is too long: 210345 tokens > 200000 maximum", 210345, 200000),
        (
            "This model's maximum context length is 8192 tokens. However, your messages resulted in "
            "9001 tokens. Please reduce the length of the messages.",
            9001,
            8192,
        ),
        (
            "This model's maximum context length is 512 tokens. However, you requested 4246 tokens "
            "(4230 in the messages, 16 in the completion).",
            4230,
            512,
        ),
        ("the request exceeds the available context size, try increasing it", None, None),
        ("Error code: 400 - {'code': 'context_length_exceeded'}", None, None),
    ],
)
def test_a_prompt_too_long_is_told_apart_in_each_runtime_s_words(message, requested, window):
    found = context_too_long(message)
    assert isinstance(found, errors.ContextTooLong) and found.message == message
    assert (found.requested, found.window) == (requested, window)
    assert "larger context" in found.hint
    # counts the caller knows fill what the words leave out
    assert context_too_long(message, requested=7, window=8).window == (window or 8)


@pytest.mark.parametrize(
    "message",
    ["upstream 529 overloaded", "invalid x-api-key", "the model 'claude-x' was not found", "context manager"],
)
def test_other_refusals_are_not_taken_for_a_prompt_too_long(message):
    assert context_too_long(message) is None


def test_client_does_not_retry_a_prompt_too_long_and_says_how_long():
    delays: list[float] = []
    model = FlakyModel(
        failures=5, error=BadRequestError("prompt is too long: 210345 tokens > 200000 maximum")
    )
    with pytest.raises(errors.ContextTooLong) as info:
        ModelClient(model, sleep=delays.append).invoke("q")
    assert model.calls == 1 and delays == []
    assert (info.value.requested, info.value.window) == (210345, 200000)
    assert info.value.message.startswith("flaky refused the request: BadRequestError: prompt is too long")


def test_client_timeout():
    gate = threading.Event()  # the model answers only once the gate opens
    model = FlakyModel(gate=gate)
    client = ModelClient(model, timeout=0.1, sleep=lambda s: None)
    try:
        with pytest.raises(errors.ModelError, match=r"flaky did not answer within 0.1 s"):
            client.invoke("q")
        assert not gate.is_set()  # returned without waiting for the model's answer
    finally:
        gate.set()
    # a call within the deadline returns normally, from the worker thread
    fast = ModelClient(FlakyModel(), timeout=5)
    assert fast.invoke("q")[0] == "SELECT 42"


def test_client_timeout_passes_errors_through():
    delays: list[float] = []
    model = FlakyModel(failures=1, error=ConnectionError("reset"))
    text, _ = ModelClient(model, timeout=5, sleep=delays.append).invoke("q")
    assert text == "SELECT 42" and delays == [1.0]


def test_secrets_are_scrubbed(monkeypatch):
    key = "sk-ant-api03-SECRETSECRETSECRET_abc-123"
    model = FlakyModel(failures=9, error=RuntimeError(f"bad request with key {key} sent"))
    with pytest.raises(errors.ModelError) as info:
        ModelClient(model, retries=0).invoke("q")
    assert key not in str(info.value)
    assert "sk-ant-***" in str(info.value)
    assert "SECRET" not in scrub_secrets("Authorization: Bearer abcdefSECRETxyz123")
    assert "SECRET" not in scrub_secrets("openai key sk-proj-SECRET123456789")
    assert "SECRET" not in scrub_secrets("{'api_key': 'SECRET12345'}")
    monkeypatch.setenv("SOME_API_KEY", "plainSECRETvalue")
    assert scrub_secrets("oops plainSECRETvalue leaked") == "oops *** leaked"


def test_describe_other_models():
    assert describe_model(FlakyModel()) == "flaky"
    assert describe_model(ScriptedChatModel(replies=[])) == "scripted"
    assert describe_model(LlamaCppChatModel(model_path="/m/qwen.gguf")) == "llamacpp:qwen"


def test_client_is_thread_safe_for_scripted():
    model = ScriptedChatModel(replies=[str(i) for i in range(200)])
    client = ModelClient(model)
    seen: list[str] = []
    lock = threading.Lock()

    def worker():
        for _ in range(50):
            text, _ = client.invoke("q")
            with lock:
                seen.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(seen, key=int) == [str(i) for i in range(200)]


def test_models_module_reexports_errors():
    assert models.ModelError is errors.ModelError
    assert models.ScriptExhausted is errors.ScriptExhausted


def test_llama_cpp_threads_wait_passively(monkeypatch, fake_llama_cpp):
    """OpenMP's spinning threads collapse on a shared machine: sqlnb asks for passive
    waiting before llama.cpp loads, unless the user chose otherwise."""
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    assert llamacpp.import_llama_cpp().__version__ == "0.0-test"
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    llamacpp.import_llama_cpp()
    assert os.environ["OMP_WAIT_POLICY"] == "ACTIVE"


class RecordingModel(BaseChatModel):
    """Records the options each call got; a reply that explains its query at length."""

    calls: list[dict[str, Any]] = Field(default_factory=list)
    takes_seed: bool = True

    @property
    def _llm_type(self) -> str:
        return "recording"

    def _generate(self, messages, stop=None, run_manager=None, **kwargs: Any) -> ChatResult:
        self.calls.append({"stop": stop, **kwargs})
        text = "```sql\nSELECT 1\n```\n\nThis query selects one."
        for s in stop or []:
            if s in text:
                text = text[: text.index(s)]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


def test_a_draft_stops_after_its_sql_block_where_the_model_takes_stops():
    from sqlnb.agent.protocol import parse_reply

    model = RecordingModel(calls=[])
    client = ModelClient(model)
    text, _ = client.invoke("q", temperature=0.7, seed=2, draft=True)
    assert model.calls[-1]["stop"] == list(models.DRAFT_STOP)
    assert model.calls[-1]["max_tokens"] == models.DRAFT_MAX_TOKENS and model.calls[-1]["seed"] == 2
    assert text == "```sql\nSELECT 1\n" and parse_reply(text).sql == "SELECT 1"
    client.invoke("q")  # the model's own reply: whole
    assert model.calls[-1]["stop"] is None and "max_tokens" not in model.calls[-1]
    # a model that takes no such options (hosted ones): nothing added
    other = RecordingModel(calls=[], takes_seed=False)
    ModelClient(other).invoke("q", temperature=0.7, seed=2, draft=True)
    assert other.calls[-1]["stop"] is None and "max_tokens" not in other.calls[-1]
