"""How the agent runs (:class:`AgentSettings`), and the number of drafts a model gets when
the settings leave it to the kind of model."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from sqlnb import errors
from sqlnb.agent.checks import CHECK_NAMES, RETIRED_CHECKS
from sqlnb.agent.repairs import RETIRED_REWRITES, REWRITE_NAMES


@dataclass
class AgentSettings:
    """How the agent runs; the front doors expose these as options and config."""

    preview_rows: int = 5  # rows of each result shown to the model
    share_data: bool = True  # False: no rows or sample values ever reach the model
    row_cap: int = 1000  # rows fetched per attempt
    statement_timeout: float | None = None  # None: the connection's
    rendering: str = "fresh"  # "fresh" or "chat" (see prompts.py)
    sample_values: bool = True  # example values of text columns in the schema context
    value_hints: bool = True  # existing values when a string filter matched nothing
    context_budget: int = 6000  # tokens of schema context
    join_paths: bool = False  # also list foreign keys as "a.x = b.y" join paths
    # After a failed query: besides the model's own correction, draw this many fresh
    # drafts of the question (the first prompt, sampled at retry_temperature); execute
    # runs them all and keeps the result most of them agree on.  0: the correction only.
    # None: per kind of model (default_retry_drafts): 3 for a local one, 0 for a hosted one.
    retry_drafts: int | None = None
    retry_temperature: float = 0.7
    # The first answer: besides the model's own reply, up to this many drafts of it
    # (sampled at first_temperature), each run read-only as it comes, until two of them
    # agree on a non-empty result that no other draft contradicts as often (adaptive
    # self-consistency); the result most drafts gave is kept, without a review call.
    # 0: the model's reply alone, reviewed by the model.  None: per kind of model
    # (default_first_drafts): 3 for a local one, 0 for a hosted one.
    first_drafts: int | None = None
    first_temperature: float = 0.7
    # The memory's accepted answers of this database (examples), for a model that drafts
    # its first answer (first_drafts, a local one by default): shown only when its own
    # answer is rated low (or none is found), in a second pass of the turn that starts over
    # from the conversation as it was (a similar earlier answer can lead a small model to
    # copy its shape; on every stored benchmark answer, starting over beat the first answer
    # where it was rated low and lost to it where it was rated medium or high).  False, or
    # a model without drafts (it cannot be rated): shown from the first call on.
    memory_when_unsure: bool = True
    # The answer rewrites of the first round (sqlnb.agent.repairs.REWRITES) turned off, by
    # name; every one is on by default.  A rewrite stands in for a draft that ran, without
    # a model call, when its query runs and keeps what it must (rows, or the draft's row
    # count); those that read stored values run only with share_data and value_hints on.
    disabled_rewrites: frozenset[str] = frozenset()
    # The answer checks (sqlnb.agent.checks.CHECKS) turned off, by name; every one is on by
    # default.  A check's finding lowers the answer's confidence with its reason; those
    # that read the data run only with share_data and value_hints on.
    disabled_checks: frozenset[str] = frozenset()
    # Refuse to start on a connection whose credentials may write, or whose write access
    # sqlnb could not find out (sqlnb.adapters.privileges): only a read-only role (or a
    # --readonly file connection) is asked.  The agent's own queries are read-only either way.
    require_readonly_role: bool = False
    # After an answer, two to four sentences on what it computed, what its SQL assumes and
    # its headline values, every number and name grounded in the question, the SQL or the
    # result (sqlnb.agent.explain): one more model call, two when a sentence was not grounded.
    explain: bool = True
    # When the answer checks find something against the kept query (not a question for
    # the user), the model is shown their findings and writes one correction, run read-only;
    # it is the answer only where it found something and the checks find strictly less
    # against it (sqlnb.agent.runner.Agent._correct): one more model call for such answers.
    correct_findings: bool = True

    def __post_init__(self) -> None:
        self.disabled_rewrites = checked_rewrite_names(self.disabled_rewrites)
        self.disabled_checks = checked_names(
            self.disabled_checks, CHECK_NAMES, "check", "disabled_checks", retired=RETIRED_CHECKS
        )

    def rewrite_on(self, name: str) -> bool:
        """Whether the answer rewrite called ``name`` may run."""
        return name not in self.disabled_rewrites


def checked_rewrite_names(names: Iterable[str] | str | None) -> frozenset[str]:
    """``names`` as a set of rewrite names; a :class:`~sqlnb.errors.ConfigurationError`
    naming the known rewrites for a name no rewrite has."""
    return checked_names(names, REWRITE_NAMES, "rewrite", "disabled_rewrites", retired=RETIRED_REWRITES)


def checked_names(
    names: Iterable[str] | str | None,
    known: Iterable[str],
    kind: str,
    setting: str,
    *,
    retired: Mapping[str, str] | None = None,
) -> frozenset[str]:
    """``names`` as a set of the ``known`` names of rules of one ``kind`` (rewrite,
    check); a :class:`~sqlnb.errors.ConfigurationError` naming the known ones for a name
    no rule has (``setting``: where the names were given).  A name of a ``retired`` rule
    (name: what became of it) is dropped with a :class:`~sqlnb.errors.RetiredRuleWarning`:
    turning off a rule that is gone asks for what already holds."""
    if names is None:
        return frozenset()
    if isinstance(names, str):
        names = [names]
    out = frozenset(str(n).strip() for n in names if str(n).strip())
    retired = retired or {}
    for name in sorted(out & retired.keys()):
        warnings.warn(
            f"The {kind} {name!r} in {setting} is no longer part of sqlnb ({retired[name]}); "
            "the name is ignored and can be removed from the setting",
            errors.RetiredRuleWarning,
            stacklevel=3,
        )
    out -= retired.keys()
    known = tuple(known)
    unknown = sorted(out - set(known))
    if unknown:
        raise errors.ConfigurationError(
            f"Unknown {kind}{'s' if len(unknown) > 1 else ''} {', '.join(repr(n) for n in unknown)} "
            f"in {setting}",
            hint=f"the {kind}s are: {', '.join(known)}",
        )
    return out


# Retry drafts per kind of model, when not set.  Local models (llama.cpp in-process, Ollama,
# an OpenAI-compatible server on this machine; scripted ones stand in for them in tests):
# 3, measured on Spider dev with the 1.5B local model (agent EX 67.6% with the drafts, 59.5%
# without: its correction mostly repeats the failing query); their cost is time.  Hosted
# models: 0, since every draft is a paid call and no gain was measured for them.
LOCAL_RETRY_DRAFTS = 3
HOSTED_RETRY_DRAFTS = 0
# Drafts of the first answer, when not set: 3 for a local model.  Measured on the 33 of
# 160 held-out Spider questions where the round drew a fourth draft: with 3 the agent
# answered as many of them right (13) with 24 fewer calls (2.90 instead of 3.05 per
# question over all 160).
LOCAL_FIRST_DRAFTS = 3
HOSTED_FIRST_DRAFTS = 0
_LOCAL_PROVIDERS = ("llamacpp", "scripted", "ollama")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "0.0.0.0")


def default_retry_drafts(client: object) -> int:
    """How many retry drafts a model gets when ``AgentSettings.retry_drafts`` is None: by
    the provider of its name (``ModelClient.name``) and, for an OpenAI-compatible model,
    whether its server is on this machine."""
    return LOCAL_RETRY_DRAFTS if is_local_model(client) else HOSTED_RETRY_DRAFTS


def default_first_drafts(client: object) -> int:
    """How many drafts of the first answer a model gets when ``AgentSettings.first_drafts``
    is None: a local model's drafts cost time only (its prompt prefix is cached), a hosted
    model's each cost a paid call."""
    return LOCAL_FIRST_DRAFTS if is_local_model(client) else HOSTED_FIRST_DRAFTS


def first_draft_cap(settings: AgentSettings, client: object) -> int:
    """How many drafts the first round may draw: the setting, else by kind of model."""
    return settings.first_drafts if settings.first_drafts is not None else default_first_drafts(client)


def is_local_model(client: object) -> bool:
    """Whether ``client``'s model runs on this machine: by the provider of its name and,
    for an OpenAI-compatible model, where its server is."""
    from urllib.parse import urlsplit

    provider = str(getattr(client, "name", "") or "").partition(":")[0].strip().lower()
    if provider in _LOCAL_PROVIDERS:
        return True
    model = getattr(client, "model", None)
    for attr in ("openai_api_base", "base_url"):
        url = getattr(model, attr, None)
        if isinstance(url, str) and url:
            try:
                host = urlsplit(url).hostname or ""
            except ValueError:
                host = ""
            if host in _LOCAL_HOSTS:
                return True
    return False
