"""What an answer cost beyond a sequential one (``sot.result.ExtraTokens``), from its calls' usage."""

from __future__ import annotations

from .result import Answer, CallRecord, ExtraTokens, Usage


def extra_tokens(answer: Answer) -> ExtraTokens | None:
    """The answer's tokens beyond a sequential answer's; None where a call that counts reported no usage."""
    if answer.mode == "sequential":
        return _besides_the_answer(answer.calls)
    reported = [call for call in answer.calls if call.usage is not None]
    points = [call for call in reported if call.purpose == "expand"]
    # Calls closed once they had what was wanted report no usage (servers send it at a stream's end).
    if not points or len(reported) < len(answer.calls) - sum(call.left_early for call in answer.calls):
        return None
    usages = [call.usage for call in reported if call.usage is not None]
    prompts = [usage.prompt_tokens for usage in usages]
    total_completion = sum(usage.completion_tokens for usage in usages)
    points_completion = sum(call.usage.completion_tokens for call in points if call.usage is not None)
    # The smallest prompt stands for a sequential answer's (the question alone, give or take instructions).
    return ExtraTokens(sum(prompts) - min(prompts), total_completion - points_completion, estimated=True)


def _besides_the_answer(calls: list[CallRecord]) -> ExtraTokens | None:
    others = [call for call in calls if call.purpose != "sequential"]
    if any(call.usage is None and not call.left_early for call in others):
        return None
    spent = sum((call.usage for call in others if call.usage is not None), Usage())
    return ExtraTokens(spent.prompt_tokens, spent.completion_tokens, estimated=False)
