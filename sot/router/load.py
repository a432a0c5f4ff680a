"""How wide an answer's expansions may fan out, given how busy the server is.

The cost model. A sequential answer is one request decoding L tokens. SoT pays an outline call first,
then N expansion streams of about L/N tokens each. On a batched server (vLLM, llama.cpp slots)
decoding is bound by memory bandwidth, so a step for a batch with free room costs about what a step
for one sequence costs: N streams that each get a batch slot finish in about the time of one, and
SoT wins (outline + L/N steps instead of L). A stream that gets no slot waits in the server's queue
until a running request ends, which can take as long as a whole answer; the expansions then run
more or less one after another, SoT pays the outline and N prompts on top of L steps, and every
other client's requests queue behind them too. So SoT wins only while the server has free slots
for the expansions, and its width should be the number of free slots:

- capacity known (llama.cpp's slots): free = capacity - running - waiting. All points at once when
  free covers them, ``free`` at a time when 2 <= free < points (the rest start as ours finish), and
  sequential when free < 2 (one stream at a time after an outline is slower than no outline) or when
  requests are waiting (the queue is already there: more parallel requests only lengthen it).
- capacity unknown (vLLM publishes no batch limit): waiting > 0 means its scheduler has no room
  (batch limit or KV blocks), so sequential; a KV cache above ``KV_HIGH_MARK`` means the next few
  sequences, each carrying the outline in its prompt, would push it to preempt running requests,
  so sequential too; otherwise the full width.
- no reading (the server publishes nothing, or it could not be read in time): only sot's own calls
  are known. Where sot limits its calls to the backend, all answers together (a batch's
  ``--concurrency``, a proxy's ``--max-upstream-calls``), the width is what the others leave of that
  limit (a proxy already running many answers narrows each one), sequential below 2; without such a
  limit nothing is known of the server's room, and the fan-out is full (``max_parallel`` is one
  answer's limit, not the server's).

The width never exceeds the points or ``max_parallel``, and "sequential" always comes with width 1.
One point or ``max_parallel`` 1 is the caller's own limit and stays "sot" with width 1: load only
narrows a fan-out or stops it, it does not reinterpret the configuration.
A caller deciding before the outline call passes its most likely number of points; a "sequential"
then saves the outline call as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from ..backends._load import LoadReading

# The decision's thresholds, in one place.
# Fewer streams at once than this and fanning out is slower than one sequential answer.
MIN_FAN_OUT: Final = 2
# A KV cache fuller than this (vLLM's fraction, 0..1) takes no more parallel sequences.
KV_HIGH_MARK: Final = 0.9

Mode = Literal["sot", "sequential"]


@dataclass(frozen=True)
class FanOut:
    """The decision: ``mode``, ``width`` (expansions at once, 1..max_parallel), ``reason``, and its inputs."""

    mode: Mode
    width: int
    reason: str
    points: int
    max_parallel: int
    own_in_flight: int
    load: LoadReading | None

    def to_dict(self) -> dict[str, Any]:
        """For ``--json``, batch records and the proxy's headers."""
        return {
            "mode": self.mode,
            "width": self.width,
            "reason": self.reason,
            "points": self.points,
            "max_parallel": self.max_parallel,
            "own_in_flight": self.own_in_flight,
            "load": None if self.load is None else self.load.to_dict(),
        }


def decide_fan_out(
    load: LoadReading | None,
    *,
    own_in_flight: int,
    points: int,
    max_parallel: int,
    own_limit: int | None = None,
    granted: int = 0,
) -> FanOut:
    """The fan-out for one answer's `points` expansions (see the module's docstring for the rules).

    `load` is the server's reading (``LoadMonitor.read()``), None where there is none; `own_in_flight`
    the calls sot already has open to this backend, other answers' included; `own_limit` the most calls
    sot may have open to it at once, all answers together (a batch's or a proxy's request limit), None
    where there is none; `granted` the widths given to other answers since the reading was taken (not in
    it yet: answers deciding on one cached reading share its free slots, not each take them all).
    """
    want = max(1, min(points, max_parallel))
    if load is None and own_limit is None:
        room, why = want, "no load reading and no limit on sot's calls: the full fan-out"
    elif load is None:
        assert own_limit is not None
        left = max(0, own_limit - own_in_flight)
        room, why = left, f"no load reading; sot has {own_in_flight} of its {own_limit} calls in flight, {left} left"
    elif load.waiting > 0:
        room, why = 0, _busy(load) + f", {load.waiting} waiting"
    elif load.capacity is not None:
        free = max(0, (load.free or 0) - granted)  # none waiting here (above)
        taken = f", {granted} given to other answers since" if granted else ""
        room, why = free, _busy(load) + f"{taken}, {free} free"
    elif load.kv_usage is not None and load.kv_usage > KV_HIGH_MARK:
        room, why = 0, f"KV cache {load.kv_usage:.0%} full (over {KV_HIGH_MARK:.0%}), {load.running} running"
    else:
        room, why = want, f"{load.running} running, none waiting" + _kv(load)
    return _fan_out(room, why, load, own_in_flight, points, max_parallel, want)


def _busy(load: LoadReading) -> str:
    if load.capacity is None:
        return f"{load.running} running"
    return f"{load.running} of {load.capacity} slots running"


def _kv(load: LoadReading) -> str:
    return "" if load.kv_usage is None else f", KV cache {load.kv_usage:.0%} full"


def _fan_out(
    room: int, why: str, load: LoadReading | None, own_in_flight: int, points: int, max_parallel: int, want: int
) -> FanOut:
    if want < MIN_FAN_OUT:
        # The caller's own limit (one point, or max_parallel 1): not the load's to turn into another mode.
        mode: Mode = "sot"
        width, reason = want, f"{want} at a time allowed (points {points}, max_parallel {max_parallel}): {why}"
    elif room < MIN_FAN_OUT:
        mode, width = "sequential", 1
        reason = f"{'server busy' if load is not None else 'sot calls fill the backend'}: {why}"
    elif room < want:
        busy = "server partly busy" if load is not None else "narrowed by sot's own calls"
        mode, width, reason = "sot", room, f"{busy}: {why}; {room} of {points} points at a time"
    else:
        mode, width, reason = "sot", want, f"room for {want} at a time: {why}"
    return FanOut(mode, width, reason, points, max_parallel, own_in_flight, load)


@dataclass
class Grants:
    """The fan-outs given to answers still running, by when: a reading is cached for a second, and the
    answers deciding on it meanwhile must share its free slots (their streams are not in it yet)."""

    active: dict[int, tuple[float, int]] = field(default_factory=dict)
    issued: int = 0

    def since(self, moment: float) -> int:
        """The widths given at or after `moment` (a reading's ``read_at``) to answers still running."""
        return sum(width for at, width in self.active.values() if at >= moment)

    def give(self, width: int, now: float) -> int:
        self.issued += 1
        self.active[self.issued] = (now, width)
        return self.issued

    def end(self, grant: int) -> None:
        self.active.pop(grant, None)
