"""Fitting a prompt into the model's context window.

The schema context is chosen within ``AgentSettings.context_budget`` tokens as
:func:`~sqlnb.agent.context.estimate_tokens` counts them: about 3.2 characters a token, close
for names and types.  Text the model's tokenizer cuts finer (the example values of an
identifier column holding UUIDs take about one token for two characters) makes the prompt
longer than the estimate, and a model with a small context (the offline model's 8192 tokens)
refuses it (:class:`~sqlnb.errors.ContextTooLong`).  The generate node then asks again with
a smaller schema context, its budget cut by what the refusal said was too much
(:func:`smaller_budget`): the tables the question names stay, the others go first.
"""

from __future__ import annotations

from sqlnb.agent.context import estimate_tokens
from sqlnb.errors import ContextTooLong

TRIES = 3  # smaller schema contexts tried after a refusal, at most
MIN_BUDGET = 300  # below this there is no schema worth showing: the refusal stands
REPLY_ROOM = 512  # tokens left for the reply (the offline model's max_tokens)
MARGIN = 1.1  # cut this much more than the refusal said, for the estimate's error
UNKNOWN_CUT = 0.6  # the budget kept when the refusal gave no token counts


def smaller_budget(schema: str, prompt: str, refused: ContextTooLong) -> int | None:
    """A schema budget (in estimated tokens, as ``context_budget``) whose prompt should fit
    where ``prompt`` (whole, ``schema`` in it) was refused; None when that leaves less than
    :data:`MIN_BUDGET`.  Always at least a tenth below the schema's own estimate."""
    shown = estimate_tokens(schema)
    if refused.requested and refused.window:
        # real tokens per estimated token over the whole prompt; the schema's own share of
        # finely cut text is larger, so the cut in estimated tokens errs on the large side
        per = refused.requested / max(estimate_tokens(prompt), shown, 1)
        room = refused.window - max(REPLY_ROOM, refused.window // 16)
        budget = int(shown - (refused.requested - room) / per * MARGIN)
    else:
        budget = int(shown * UNKNOWN_CUT)
    budget = min(budget, int(shown * 0.9))
    return budget if budget >= MIN_BUDGET else None
