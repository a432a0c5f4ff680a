"""eval/quality: judges stood in for through `sot judge`'s own prompts, dealt out by standin.py, scored.

Run as a user runs them (the scripts, in subprocesses), on a store of two questions whose judge
replies are written here: one question SoT wins in both orders, one a judge always answers "A" for.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
HARNESS = ROOT / "eval" / "quality" / "harness.py"
STANDIN = ROOT / "eval" / "quality" / "standin.py"
QUESTIONS = [("k1", "knowledge", "Why is the sky blue?"), ("h1", "how-to", "How do I bleed a radiator?")]


def script(path: Path, *args: str, store: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(path), *args, "--store", str(store)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def make_store(tmp_path: Path) -> Path:
    """A store whose answers are whole (as `harness.py run` leaves it): only judging is left."""
    store = tmp_path / "store"
    store.mkdir()
    # h1's SoT answer quotes k1's question: its prompts are still h1's
    texts = {"k1": "sot answer to k1", "h1": f"sot answer to h1, not to '{QUESTIONS[0][2]}'"}
    records = [
        {"id": i, "mode": mode, "category": c, "question": q, "error": None}
        | {"text": texts[i] if mode == "sot" else f"sequential answer to {i}"}
        for i, c, q in QUESTIONS
        for mode in ("sot", "sequential")
    ]
    write(store / "results.jsonl", records)
    return store


def reply(row: dict[str, Any]) -> str:
    """k1: the SoT answer, wherever it stands; h1: always A (a position bias, so a tie)."""
    prompt = row["messages"][-1]["content"]
    first = re.search(r"\[Answer A [0-9a-f]{16}\]\n(\w+)", prompt)
    assert first is not None
    verdict = "A" if row["question_id"] == "h1" or first.group(1) == "sot" else "B"
    return f"One is better.\n[[{verdict}]]"


def test_a_panel_judges_through_sot_judge_and_scores(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    first = script(HARNESS, "judge", "--panel", "a", store=store)
    assert first.returncode == 0, first.stderr
    pending = read(store / "pending_judge_a.jsonl")
    assert len(pending) == 4  # two questions, both orders, asked in one pass
    assert {row["kind"] for row in pending} == {"judge"}
    assert sorted(row["question_id"] for row in pending) == ["h1", "h1", "k1", "k1"]
    assert all("Weigh, in this order" in row["messages"][-1]["content"] for row in pending)  # judge.j2 itself
    assert not (store / "judged_a.jsonl").exists()

    dealt = script(STANDIN, "--pending", "pending_judge_a.jsonl", "--writers", "a1,a2", store=store)
    assert dealt.returncode == 0, dealt.stderr
    for writer in ("a1", "a2"):
        share = read(store / f"share_{writer}.jsonl")
        assert sorted(row["question_id"] for row in share) == ["h1", "k1"]  # never both orders of one question
        assert str((store / f"judge_replies_{writer}.jsonl").resolve()) in (store / f"brief_{writer}.md").read_text()
        answers = [{"key": r["key"], "kind": r["kind"], "answer": reply(r), "writer": writer} for r in share]
        write(store / f"judge_replies_{writer}.jsonl", answers)

    second = script(HARNESS, "judge", "--panel", "a", store=store)
    assert second.returncode == 0, second.stderr
    assert read(store / "pending_judge_a.jsonl") == []
    winners = {r["id"]: r["winner"] for r in read(store / "judged_a.jsonl")}
    assert winners == {"k1": "sot", "h1": "tie"}

    scored = script(HARNESS, "score", store=store)
    assert scored.returncode == 0, scored.stderr
    report = json.loads((store / "score.json").read_text())["by_category"]
    assert report["all"] == {"judgements": 2, "sot": 1, "sequential": 0, "tie": 1, "net_win_rate": 0.5}
    assert report["knowledge"]["net_win_rate"] == 1.0


def judge_all(store: Path, panel: str, verdict: str = "") -> None:
    """The panel's prompts dealt to two judges who answer `verdict`, or as `reply` would."""
    assert script(HARNESS, "judge", "--panel", panel, store=store).returncode == 0
    writers = f"{panel}1,{panel}2"
    assert (
        script(STANDIN, "--pending", f"pending_judge_{panel}.jsonl", "--writers", writers, store=store).returncode == 0
    )
    for writer in writers.split(","):
        rows = read(store / f"share_{writer}.jsonl")
        answers = [{"key": r["key"], "answer": verdict or reply(r)} for r in rows]
        write(store / f"judge_replies_{writer}.jsonl", answers)


def test_panels_keep_to_their_own_judges_and_stale_verdicts_go(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    judge_all(store, "ab")
    assert script(HARNESS, "judge", "--panel", "ab", store=store).returncode == 0
    assert (store / "judged_ab.jsonl").exists()
    alone = script(HARNESS, "judge", "--panel", "a", store=store)  # judge_replies_ab1 is not panel a's
    assert alone.returncode == 0 and len(read(store / "pending_judge_a.jsonl")) == 4
    assert not (store / "judged_a.jsonl").exists()
    assert script(HARNESS, "judge", "--panel", "a1", store=store).returncode == 2

    records = read(store / "results.jsonl")  # the answers change: panel ab's verdicts are of other answers
    write(store / "results.jsonl", [r | {"text": r["text"] + "."} for r in records])
    assert script(HARNESS, "judge", "--panel", "ab", store=store).returncode == 0
    assert len(read(store / "pending_judge_ab.jsonl")) == 4 and not (store / "judged_ab.jsonl").exists()


def test_unreadable_verdicts_are_reported_and_scored_apart(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    judge_all(store, "a", verdict="Both are fine.")
    done = script(HARNESS, "judge", "--panel", "a", store=store)
    assert done.returncode == 1 and "2 question(s) without a readable verdict" in done.stderr
    assert script(HARNESS, "score", store=store).returncode == 0
    report = json.loads((store / "score.json").read_text())["by_category"]
    assert report["all"] == {"judgements": 0, "sot": 0, "sequential": 0, "tie": 0, "net_win_rate": None, "unparsed": 2}
    (store / "verdicts_b1.jsonl").write_text("")
    mixed = script(HARNESS, "score", store=store)
    assert mixed.returncode != 0 and "a store is judged one way" in mixed.stderr


def test_standin_refuses_writers_that_do_not_fit(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    assert script(HARNESS, "judge", "--panel", "b", store=store).returncode == 0
    stranger = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "a1,b2", store=store)
    assert stranger.returncode != 0 and "panel b" in stranger.stderr
    crowd = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b1,b2,b3,b4,b5", store=store)
    assert crowd.returncode != 0 and "give 2 to 4" in crowd.stderr
    alone = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b1", store=store)
    assert alone.returncode != 0 and "each for a different writer" in alone.stderr  # both orders to one judge
    missing = script(STANDIN, "--pending", "pending_judge_c.jsonl", "--writers", "c1", store=store)
    assert missing.returncode != 0 and "--pending: no" in missing.stderr

    assert script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b1,b2", store=store).returncode == 0
    again = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b1,b2", store=store)
    assert again.returncode != 0 and "in a writer's share" in again.stderr  # b1 and b2 are still writing
    share = read(store / "share_b1.jsonl")
    write(store / "judge_replies_b1.jsonl", [{"key": r["key"], "answer": "[[C]]"} for r in share])
    held = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b3,b4", store=store)
    assert held.returncode != 0 and "in a writer's share" in held.stderr  # b2 has not answered yet: still b2's
    assert script(HARNESS, "judge", "--panel", "c", store=store).returncode == 0  # another panel, same prompts
    other = script(STANDIN, "--pending", "pending_judge_c.jsonl", "--writers", "c1,c2", store=store)
    assert other.returncode == 0, other.stderr  # panel b's shares hold nothing of panel c's
    (store / "share_b2.jsonl").rename(tmp_path / "b2_gave_up.jsonl")
    rest = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b3,b4", store=store)
    assert rest.returncode == 0, rest.stderr  # b2's prompts, and only those, are dealt again
    dealt = read(store / "share_b3.jsonl") + read(store / "share_b4.jsonl")
    assert sorted(r["key"] for r in dealt) == sorted(r["key"] for r in read(tmp_path / "b2_gave_up.jsonl"))
    (store / "share_b3.jsonl").unlink()
    reused = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--writers", "b1,b4", store=store)
    assert reused.returncode != 0 and "give new names" in reused.stderr  # b1 wrote, b4 holds a brief
    wrong = script(STANDIN, "--pending", "pending_judge_b.jsonl", "--kinds", "judgment", "--writers", "b5", store=store)
    assert wrong.returncode != 0 and "holds ['judge']" in wrong.stderr


def test_a_broken_answers_file_is_named_with_its_line(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    (store / "judge_replies_a1.jsonl").write_text(
        '{"key": "k", "answer": "[[A]]"}\n{"key": "k2", "answer": "unterminated\n'
    )
    broken = script(HARNESS, "judge", "--panel", "a", store=store)
    assert broken.returncode != 0 and "judge_replies_a1.jsonl, line 2: not JSON" in broken.stderr
    write(store / "judge_replies_a1.jsonl", [{"key": "k", "reply": "[[A]]"}])
    unnamed = script(HARNESS, "judge", "--panel", "a", store=store)
    assert unnamed.returncode != 0 and 'row 1: an answer needs "key" and "answer"' in unnamed.stderr


def test_run_asks_for_its_questions(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    done = script(HARNESS, "run", store=store)
    assert done.returncode == 2 and "run needs --questions FILE" in done.stderr
    typo = script(HARNESS, "run", "--questions", str(tmp_path / "nosuch.jsonl"), store=store)
    assert typo.returncode == 2 and len(read(store / "results.jsonl")) == 4  # nothing was overwritten


def test_pending_prompts_belong_to_the_question_that_asked_them(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    write(store / "judged_a.jsonl", [{"id": "k1", "mode": "judge", "winner": "sot", "error": None}])
    questions = tmp_path / "questions.jsonl"
    short, longer = "How do I bleed a radiator?", "How do I bleed a radiator? I have a combi boiler."
    write(questions, [{"id": i, "category": "how-to", "question": q} for i, q in (("r1", short), ("r2", longer))])
    done = script(HARNESS, "run", "--questions", str(questions), store=store)
    assert done.returncode == 0, done.stderr
    ids = sorted(row["question_id"] for row in read(store / "pending.jsonl"))
    assert ids == ["r1", "r1", "r2", "r2"]  # each one's plan and sequential prompt, though r2's text holds r1's
    assert not (store / "judged_a.jsonl").exists() and "the answers changed" in done.stdout


def test_a_pair_whose_two_answers_are_one_text_is_judged(tmp_path: Path) -> None:
    store = make_store(tmp_path)
    write(store / "results.jsonl", [r | {"text": "the same answer"} for r in read(store / "results.jsonl")])
    done = script(HARNESS, "judge", "--panel", "a", store=store)
    assert done.returncode == 0, done.stderr
    assert len(read(store / "pending_judge_a.jsonl")) == 2  # both orders are one prompt, for each question


def test_standin_gives_each_writer_of_each_store_a_scratch_folder_of_its_own(tmp_path: Path) -> None:
    """Writers of two stores may run at once under the same names, and two stores may share a name."""
    folders = []
    for parent in ("one", "two"):
        (tmp_path / parent).mkdir()
        store = make_store(tmp_path / parent)
        assert script(HARNESS, "judge", "--panel", "a", store=store).returncode == 0
        dealt = script(STANDIN, "--pending", "pending_judge_a.jsonl", "--writers", "a1,a2", store=store)
        assert dealt.returncode == 0, dealt.stderr
        for writer in ("a1", "a2"):
            found = re.search(r"scratch files in (\S+) \(create it\)", (store / f"brief_{writer}.md").read_text())
            assert found is not None
            folders.append(found.group(1))
    assert len(set(folders)) == 4 and all("/sot_standin/store-" in folder for folder in folders)
