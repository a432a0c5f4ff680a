"""Pairwise LLM-as-judge of SoT against sequential answers, each pair judged in both orders.

Answers are untrusted: each sits between marker lines carrying a random code made for that call
(``secrets``; only a replay of recorded replies passes ``Judge`` its own), so answer text cannot
close its own block or open the other's, and verdict tokens inside answers are broken up before the
judge sees them. A verdict is ``[[A]]``, ``[[B]]`` or ``[[C]]`` (tie) alone on the last line of the
judge's reply (only the reply is read, never the prompt with the answers). When the two orders
disagree the pair counts as a tie, which cancels the judge's position bias; a reply without a
readable verdict makes the pair ``unparsed``, counted apart, never as a tie. Each record keeps the
judge's two raw replies, so an unparsed verdict can be read. Results are appended to their own JSONL
with the same crash-safe writer as batch runs, and resume skips judged ids.

The judge's endpoint is checked once before the first pair (``JudgeEndpoint.connect``): an address
that is not a URL, a server that does not answer, a refused key or a path that is no OpenAI API
fail the run at once in one line naming the flag to fix, instead of failing every pair in turn.
"""

from __future__ import annotations

import re
import secrets
import sys
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import anyio
import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from .. import constants
from .._sanitize import sanitize
from ..backends._errors import names_api_version
from ..backends._probe import ProbeFailed, get_json, model_ids
from ..backends.base import Backend, ChatRequest
from ..backends.openai_compat import OpenAICompatBackend
from ..calls import Caller
from ..errors import AuthenticationError, BackendConnectionError, BackendError, ConfigurationError, SotError
from ..options import RetryPolicy
from ..templates import Message, Prompts
from .records import ResultsFile, load_records, open_results
from .runner import describe_failure

JUDGE_TEMPLATE = "judge.j2"
_VERDICT = re.compile(r"\[\[([ABC])\]\]")


def parse_verdict(reply: str) -> str | None:
    """The verdict alone on the reply's last non-empty line; None when it is absent or ambiguous."""
    lines = [line for line in reply.splitlines() if line.strip()]
    found = set(_VERDICT.findall(lines[-1])) if lines else set()
    return found.pop() if len(found) == 1 else None


def defang(text: str) -> str:
    """Untrusted text that cannot spell a verdict token ([[A]]) or a doubled bracket."""
    return str(text).replace("[[", "[ [").replace("]]", "] ]")


def fresh_nonce(*texts: str) -> str:
    """A random code for one judge prompt's markers, found in none of the texts it delimits."""
    while True:
        nonce = secrets.token_hex(8)
        if not any(nonce in text for text in texts):
            return nonce


def pairs_from(records: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(SoT record, sequential record) for every id answered without error in both modes."""
    by_mode: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for record in records:
        answered = isinstance(record.get("text"), str) and isinstance(record.get("question"), str)
        if record.get("error") is None and answered:
            by_mode[str(record["mode"])][str(record["id"])] = record
    return [(by_mode["sot"][i], by_mode["sequential"][i]) for i in by_mode["sot"] if i in by_mode["sequential"]]


# The endpoint check is one small GET: a server that cannot answer it this fast is not ready to judge.
PROBE_DEADLINE_S = constants.CONNECT_TIMEOUT_S
_NOT_A_URL = "'base_url' must be the judge's OpenAI-compatible address, http(s)://host[:port]/path (e.g. http://127.0.0.1:8091/v1)"


class JudgeEndpoint:
    """The judge's server as the command line names it: its address is checked when made, its server by ``connect``."""

    def __init__(self, base_url: str, model: str | None = None, api_key: str | None = None) -> None:
        try:
            url = httpx.URL(base_url.strip())
        except (httpx.InvalidURL, TypeError):
            raise ConfigurationError(_NOT_A_URL, options=("base_url",)) from None
        if url.scheme not in ("http", "https") or not url.host:
            raise ConfigurationError(_NOT_A_URL, options=("base_url",))
        self._url = url
        self.base_url = base_url.strip()
        self.model = model or None
        self._api_key = api_key

    def __repr__(self) -> str:
        return f"JudgeEndpoint(model={self.model!r})"

    async def connect(self) -> OpenAICompatBackend:
        """A backend for the judge once its server answered GET /models; the model is discovered if not given."""
        models = await self._listed_models()
        model = self.model
        if model is None:
            if len(models) != 1:
                shown = ", ".join(sanitize(m)[:80] for m in models[:5]) + (", …" if len(models) > 5 else "")
                listed = f" ({shown})" if shown else ""
                raise ConfigurationError(
                    f"give 'model': the judge server lists {len(models)} models{listed}", options=("model",)
                )
            model = models[0]
        return OpenAICompatBackend(self.base_url, model, api_key=self._api_key)

    async def _listed_models(self) -> list[str]:
        url = self._url
        # User info in the URL is Basic auth, as for answers; neither it nor the key reaches a message.
        auth = httpx.BasicAuth(url.username, url.password) if url.userinfo else None
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        listing = str(url.copy_with(username=None, password=None)).rstrip("/") + "/models"
        async with httpx.AsyncClient(auth=auth, follow_redirects=False) as http:
            try:
                status, payload = await get_json(http, listing, deadline_s=PROBE_DEADLINE_S, headers=headers)
            except ProbeFailed as exc:
                raise BackendConnectionError(
                    f"the judge server does not answer: {exc}; check 'base_url' and that the server is running",
                    retryable=False,
                    options=("base_url",),
                ) from None
        if status in (401, 403):
            raise AuthenticationError(
                f"the judge server refused the request (HTTP {status}): check 'api_key' "
                f"(or ${constants.ENV_JUDGE_API_KEY})",
                status_code=status,
                options=("api_key",),
            )
        data = payload.get("data") if isinstance(payload, dict) else None
        if status == 200 and isinstance(data, list):
            return model_ids(data)
        if status not in (200, 404):
            raise BackendError(
                f"the judge server answered HTTP {status} to GET /models: check 'base_url' and that the server "
                "is up and ready",
                status_code=status,
                options=("base_url",),
            )
        add_v1 = "" if names_api_version(url.path) else "; add /v1?"
        problem = f"HTTP 404 for /models{add_v1}" if status == 404 else "/models is no OpenAI model list: a web page?"
        raise ConfigurationError(
            f"no OpenAI-compatible API at 'base_url' ({problem}): give the API's base, e.g. http://HOST:PORT/v1",
            options=("base_url",),
        )


class Judge:
    """Asks one judge model for verdicts. ``nonce`` makes each prompt's marker code (random by default; a
    replay of recorded replies needs the same prompt each time, so it passes one derived from the texts)."""

    def __init__(
        self,
        backend: Backend,
        prompts: Prompts,
        policy: RetryPolicy | None = None,
        *,
        nonce: Callable[[str, str, str], str] = fresh_nonce,
    ) -> None:
        self.backend = backend
        self.prompts = prompts
        self.caller = Caller(backend, policy or RetryPolicy())
        self.nonce = nonce

    async def verdict(self, question: str, answer_a: str, answer_b: str) -> tuple[str | None, str]:
        """(verdict or None, the judge's raw reply)."""
        question, answer_a, answer_b = defang(question), defang(answer_a), defang(answer_b)
        nonce = self.nonce(question, answer_a, answer_b)
        text = self.prompts.render(JUDGE_TEMPLATE, question=question, answer_a=answer_a, answer_b=answer_b, nonce=nonce)
        request = ChatRequest([Message("user", text)], max_tokens=400, temperature=0.0)
        outcome = await self.caller.call(request, purpose="judge")
        return parse_verdict(outcome.text), outcome.text

    async def judge_pair(self, sot: dict[str, Any], sequential: dict[str, Any]) -> dict[str, Any]:
        question = str(sot["question"])
        first, first_reply = await self.verdict(question, sot["text"], sequential["text"])  # A = SoT
        second, second_reply = await self.verdict(question, sequential["text"], sot["text"])  # A = sequential
        as_winner = {("A", 1): "sot", ("B", 1): "sequential", ("A", 2): "sequential", ("B", 2): "sot"}
        w1 = as_winner.get((first or "", 1), "tie")
        w2 = as_winner.get((second or "", 2), "tie")
        winner = "unparsed" if first is None or second is None else w1 if w1 == w2 else "tie"
        return {
            "id": sot["id"],
            "mode": "judge",
            "category": sot.get("category"),
            "sot_first": first,
            "sequential_first": second,
            "winner": winner,
            "judge_model": self.backend.model,
            # Kept whole: a verdict read wrongly, or not at all, is only explained by what the judge wrote.
            "sot_first_reply": first_reply,
            "sequential_first_reply": second_reply,
            "error": None,
        }


@dataclass
class JudgeSummary:
    pairs: int
    judged: int
    skipped: int
    failed: int = 0  # the judge call failed (an error record; re-run by --resume)
    unparsed: int = 0  # the judge answered without a readable verdict
    model: str | None = None  # the judge model this run used (None when nothing was left to judge)

    @property
    def all_failed(self) -> bool:
        return self.judged > 0 and self.failed + self.unparsed == self.judged

    def count(self, record: dict[str, Any]) -> None:
        """One judgement more: an error record, or a verdict readable or not."""
        self.judged += 1
        self.failed += record.get("error") is not None
        self.unparsed += record.get("winner") == "unparsed"


class JudgeProgress:
    """Progress on stderr: a bar on a terminal; piped, one line per judged pair (a log keeps them)."""

    def __init__(self, enabled: bool = True, stream: TextIO | None = None) -> None:
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self.total = 0
        self._bar: Progress | None = None
        self._task: Any = None

    def start(self, pairs: int, model: str) -> None:
        self.total = pairs
        if not self.enabled:
            return
        self._line(f"sot: judging {pairs} pair(s) with {model}, each in both orders")
        if self.stream.isatty():
            columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
            self._bar = Progress(*columns, console=Console(file=self.stream), transient=False)
            self._task = self._bar.add_task("judging", total=pairs)
            self._bar.start()

    def judged(self, record: dict[str, Any], summary: JudgeSummary) -> None:
        """`record` was just judged; `summary` has counted it."""
        if not self.enabled:
            return
        failed = record.get("error") is not None
        outcome = f"failed: {sanitize(str(record['error']))}" if failed else str(record.get("winner"))
        if self._bar is not None:
            tally = f"judged {summary.judged} · unparsed {summary.unparsed} · failed {summary.failed}"
            self._bar.update(self._task, advance=1, description=tally)
        else:
            done = f"{summary.judged}/{self.total}"
            self._line(f"sot: judged {done} ({sanitize(str(record['id']))[:80]}): {outcome}")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


async def run_judge(
    judge: Judge | JudgeEndpoint,
    results: str | Path,
    out: str | Path,
    *,
    concurrency: int,
    resume: bool,
    overwrite: bool = False,
    progress: JudgeProgress | None = None,
) -> JudgeSummary:
    """Judge every pair not judged yet; an endpoint is connected (and so checked) only when one is left."""
    if concurrency < 1:
        raise ConfigurationError("'concurrency' must be at least 1", options=("concurrency",))
    pairs = pairs_from(load_records(results).records)
    if not pairs:
        raise ConfigurationError(
            f"nothing to judge: {results} has no id answered without error in both sot and sequential mode"
        )
    progress = progress or JudgeProgress(enabled=False)
    opened: list[OpenAICompatBackend] = []

    async def ready(judge: Judge | JudgeEndpoint) -> Judge:
        if isinstance(judge, Judge):
            return judge
        opened.append(await judge.connect())
        return Judge(opened[-1], Prompts())

    try:
        if not resume:
            # Checked before the file is opened: a judge that cannot work must not cost --overwrite the old judgements.
            judge = await ready(judge)
        writer, done = open_results(out, resume=resume, overwrite=overwrite)
        try:
            todo = [(s, q) for s, q in pairs if (str(s["id"]), "judge") not in done]
            summary = JudgeSummary(pairs=len(pairs), judged=0, skipped=len(pairs) - len(todo))
            if not todo:
                return summary
            judge = await ready(judge)
            summary.model = judge.backend.model
            progress.start(len(todo), sanitize(judge.backend.model)[:80])
            try:
                await _judge_all(judge, todo, writer, summary, concurrency, progress)
            finally:
                progress.stop()
            return summary
        finally:
            writer.close()
    finally:
        for backend in opened:
            await backend.aclose()


async def _judge_all(
    judge: Judge,
    todo: list[tuple[dict[str, Any], dict[str, Any]]],
    writer: ResultsFile,
    summary: JudgeSummary,
    concurrency: int,
    progress: JudgeProgress,
) -> None:
    limiter = anyio.CapacityLimiter(concurrency)
    fatal: list[SotError] = []

    async def one(sot: dict[str, Any], sequential: dict[str, Any], scope: anyio.CancelScope) -> None:
        async with limiter:
            try:
                record = await judge.judge_pair(sot, sequential)
            except Exception as exc:
                error_type, message = describe_failure(exc)
                record = {
                    "id": sot["id"],
                    "mode": "judge",
                    "category": sot.get("category"),
                    "error": message,
                    "error_type": error_type,
                }
        try:
            await writer.append(record)
        except SotError as exc:  # the judgements file itself failed (a full disk): stop the run
            fatal.append(exc)
            scope.cancel()
            return
        summary.count(record)
        progress.judged(record, summary)

    async with anyio.create_task_group() as tg:
        for sot, sequential in todo:
            tg.start_soon(one, sot, sequential, tg.cancel_scope)
    if fatal:
        raise fatal[0]


@dataclass
class WinRow:
    """One category's tally; ``judged`` counts pairs with a verdict in both orders."""

    judged: int = 0
    sot: int = 0
    sequential: int = 0
    tie: int = 0
    unparsed: int = 0

    @property
    def net_win_rate(self) -> float | None:
        """(SoT wins - sequential wins) / judged; None where nothing was judged (no rate, not a draw)."""
        return (self.sot - self.sequential) / self.judged if self.judged else None


def win_rates(records: list[dict[str, Any]]) -> dict[str, WinRow]:
    """Per category and overall: SoT wins, losses, ties, unparsed and the net win rate; overall last."""
    outcomes = ("sot", "sequential", "tie", "unparsed")
    table: dict[str, WinRow] = defaultdict(WinRow)
    for record in records:
        winner = record.get("winner")
        if record.get("error") is not None or record.get("mode") != "judge" or winner not in outcomes:
            continue
        for category in (str(record.get("category") or "uncategorized"), "overall"):
            row = table[category]
            row.judged += winner != "unparsed"
            setattr(row, str(winner), getattr(row, str(winner)) + 1)
    return dict(sorted(table.items(), key=lambda item: (item[0] == "overall", item[0])))
