"""The generic outline parser: list syntax of every kind, titles exactly as written, no word rules."""

from __future__ import annotations

import inspect

import pytest

import sot._heading as _heading
from sot import SkeletonShape, outline, parse_skeleton, split_title
from sot.outline import OutlinePoint, SkeletonParser

# Titles a strong model writes, which word rules used to cut, merge or drop.
TITLES = [
    "Brown v. Board of Education (1954)",
    "What GDPR is",
    "Communicate calmly and directly",
    "Then fund the account",
    "So why isn't it working?",
    "Move more",
    "Sleep more",
    "Type 1 diabetes symptoms",
    "Type 2 diabetes symptoms",
    "Give feedback",
    "Ask for feedback",
    "Inc. vs. LLC taxation",
    "What to look for",
    "Train in zone 2",
    "Use `git rebase -i` to tidy history",
    "Dr. Smith's 3-step method, e.g. for beginners",
    "And finally",
]


@pytest.mark.parametrize(
    "layout",
    [
        "{n}. {t}",
        "{n}) {t}",
        "({n}) {t}",
        "{n}: {t}",
        "Step {n}: {t}",
        "### {n}. {t}",
        "**{n}. {t}**",
        "{n}. **{t}**",
        "**{n}.** {t}",
        "{n}. *{t}*",
        "- {t}",
        "* **{t}**",
        "## {t}",
    ],
)
def test_every_title_is_kept_as_written_in_every_list_style(layout: str) -> None:
    text = "Here is the outline:\n\n" + "\n".join(layout.format(n=n, t=t) for n, t in enumerate(TITLES, 1))
    text += "\n\nLet me know if you want more detail."
    assert parse_skeleton(text, max_points=len(TITLES)) == TITLES


def test_roman_numerals_full_width_digits_and_stops() -> None:
    assert parse_skeleton("I. Intro\nII. Body\nIII. Close\nIV. Appendix") == ["Intro", "Body", "Close", "Appendix"]
    assert parse_skeleton("１．最初の点\n２．二番目の点\n３、三番目") == ["最初の点", "二番目の点", "三番目"]
    assert parse_skeleton("1.概要\n2.手順\n3.まとめ") == ["概要", "手順", "まとめ"]
    assert parse_skeleton("（1）概要\n（2）手順\n（3）まとめ") == ["概要", "手順", "まとめ"]
    assert parse_skeleton("・概要\n・手順\n・まとめ") == ["概要", "手順", "まとめ"]


SPLITS = [
    ("Exercise: aim for 150 minutes a week", OutlinePoint("Exercise", "aim for 150 minutes a week")),
    ("**Exercise**: aim for 150 minutes", OutlinePoint("Exercise", "aim for 150 minutes")),
    ("**Exercise:** aim for 150 minutes", OutlinePoint("Exercise", "aim for 150 minutes")),
    ("Exercise – aim for 150 minutes", OutlinePoint("Exercise", "aim for 150 minutes")),
    ("Exercise - aim for 150 minutes", OutlinePoint("Exercise", "aim for 150 minutes")),
    ("Well-being at 10:30 a.m.", OutlinePoint("Well-being at 10:30 a.m.")),
    ("`a: b` in YAML: quoting rules", OutlinePoint("`a: b` in YAML", "quoting rules")),
    ("**Brown v. Board: the case** (1954)", OutlinePoint("Brown v. Board: the case (1954)")),
    ("**Python** vs **Rust**: performance", OutlinePoint("Python vs Rust", "performance")),
    ("Day 1 – Kyoto: temples (about 100 words)", OutlinePoint("Day 1 – Kyoto", "temples (about 100 words)")),
    ("9:00 – 10:30: Deep work", OutlinePoint("9:00 – 10:30", "Deep work")),
    ("Using `**kwargs` safely: tips", OutlinePoint("Using `**kwargs` safely", "tips")),
    ("2**10 and bit shifts", OutlinePoint("2**10 and bit shifts")),
    ("***Bold italic***: x", OutlinePoint("Bold italic", "x")),
    ("概要：この節では説明します", OutlinePoint("概要", "この節では説明します")),
    ("*Conclusion: wrap up*", OutlinePoint("Conclusion: wrap up")),
    ("__Title: desc__", OutlinePoint("Title: desc")),
]


@pytest.mark.parametrize(("line", "point"), SPLITS)
def test_a_title_and_its_description_are_split_and_both_kept(line: str, point: OutlinePoint) -> None:
    assert split_title(line) == point


@pytest.mark.parametrize(("line", "point"), SPLITS)
def test_a_streamed_heading_is_told_early_only_once_nothing_can_change_it(line: str, point: OutlinePoint) -> None:
    # Streamed a character at a time as the second item: whatever `upcoming` tells before the line ends
    # is the title the point gets; it tells one once a colon's (or emphasis's) description has begun.
    parser = SkeletonParser()
    parser.feed("1. Alpha: first\n2. ")
    told = set()
    for char in line:
        parser.feed(char)
        told.add(parser.upcoming())
    parser.finish()
    assert parser.points == ["Alpha", point.title]
    assert told - {None} <= {point.title}
    head = line[: line.rindex(point.detail)].rstrip() if point.detail else ""
    assert (point.title in told) == head.endswith((":", "：", "*"))


def test_a_heading_without_a_description_is_told_when_its_line_ends() -> None:
    parser = SkeletonParser()
    parser.feed("1. Alpha: first\n2. Beta (about 100 words)")
    assert parser.upcoming() is None  # "Beta (about 100 words) - ..." could still be a dash's title
    parser.feed("\n")
    assert parser.upcoming() == "Beta (about 100 words)"


def test_no_heading_is_told_for_a_repeat_a_sub_item_or_past_the_cap() -> None:
    parser = SkeletonParser(max_points=2)
    parser.feed("1. Alpha: first\n   2. sub-item: part of Alpha")
    assert parser.points == [] and parser.upcoming() == "Alpha"  # its own line is whole; no next one yet
    parser.feed("\n2. alpha: again")
    assert parser.upcoming() is None  # a repeat is dropped
    parser.feed("\n3. Beta: second\n4. Gamma: th")
    assert parser.points == ["Alpha", "Beta"] and parser.upcoming() is None


def test_sub_items_and_lines_under_a_point_are_its_detail() -> None:
    parser = SkeletonParser()
    parser.feed("1. **Prepare**\n   - pack light\n   - check the weather\n2. Go: enjoy it\nMore on going\n")
    parser.feed("\nThat's all.\n")
    parser.finish()
    assert parser.points == ["Prepare", "Go"]
    assert parser.details == ["- pack light\n- check the weather", "enjoy it\nMore on going"]
    assert parser.detail("Go") == "enjoy it\nMore on going"


def test_a_point_is_released_when_the_next_begins_and_the_last_at_the_end() -> None:
    parser = SkeletonParser()
    assert parser.feed("1. Alpha\n") == []
    assert parser.feed("2. Be") == ["Alpha"]
    assert parser.feed("ta\n") == []
    assert parser.finish() == ["Beta"]


def test_a_second_list_in_a_closing_remark_adds_no_points() -> None:
    text = "1. Alpha\n2. Beta\n3. Gamma\n\nIn short:\n1. Alpha again\n2. Beta again"
    assert parse_skeleton(text) == ["Alpha", "Beta", "Gamma"]


def test_caps_on_count_and_length_and_control_characters_and_exact_repeats() -> None:
    long = "word " * 60
    titles = parse_skeleton(
        f"1. {long}\n2. a\x07b\x1b[31m\n3. Cats\n4. cats\n5. Dogs", shape=SkeletonShape(max_points=3)
    )
    assert titles[0].endswith("…") and len(titles[0]) <= SkeletonShape().point_chars
    assert " ".join(titles[0].rstrip("…").split()) in long  # shortened at a word boundary, nothing else
    assert titles[1:] == ["ab[31m", "Cats"]


@pytest.mark.parametrize("chunk", [1000, 7])
def test_what_the_cap_cuts_off_a_title_leads_its_detail(chunk: int) -> None:
    # A plan line with no "Title: description" split is all title: its writer still reads all of it,
    # signs and dashes included, whether the plan arrives whole or in pieces.
    kept = "Is the price fair? " + "a" * 138  # the cap (160) falls inside the next word, "-5"
    line = f"{kept} -5 °C, --dry-run first"
    plan = f"1. {line}\n   with a line under it\n2. Short: described\n"
    parser = SkeletonParser(shape=SkeletonShape(max_points=3))
    for start in range(0, len(plan), chunk):
        parser.feed(plan[start : start + chunk])
    parser.finish()
    title, detail = parser.points[0], parser.detail(parser.points[0])
    assert title == f"{kept}…"
    cut_off, under = detail.split("\n")
    assert cut_off.startswith("…") and under == "with a line under it"
    assert line == f"{title[:-1]} {cut_off[1:]}"  # nothing lost, nothing added
    assert parser.detail("Short") == "described"  # an uncut title leaves its detail as written


def test_numbers_inside_text_start_no_point() -> None:
    assert parse_skeleton("1. Drink 1.5 litres a day\n2. Wake at 6:30\n3. Sleep") == [
        "Drink 1.5 litres a day",
        "Wake at 6:30",
        "Sleep",
    ]


def test_the_generic_parser_is_small_and_knows_no_words() -> None:
    for module in (outline, _heading):
        source = inspect.getsource(module)
        assert len(source.splitlines()) <= 250
        assert "frozenset" not in source  # no word lists
