"""The small profile's rules are split over private modules; the paths others import from stay."""

from __future__ import annotations


def test_the_outline_module_still_offers_what_eval_and_the_profile_import() -> None:
    from sot.backends.small_model._outline import DANGLING_WORDS, SkeletonParser, parse_skeleton, shape_title

    # eval/bench_quality.py widens this set for its own cut-title count.
    assert {"the", "and", "of", "whether"} <= DANGLING_WORDS and "sleep" not in DANGLING_WORDS
    assert shape_title("Set clear goals and break them down into small", 6) == "Set clear goals"
    outline = "1. Sleep well\n2. Eat well\n3. Eat well\n"
    assert parse_skeleton(outline, strict=True, question="How do I stay healthy?") == ["Sleep well", "Eat well"]
    parser = SkeletonParser(strict=True)
    assert parser.feed("1. Sleep well\n2. Eat well") == ["Sleep well"] and parser.finish() == ["Eat well"]


def test_the_tidy_module_still_offers_what_the_profile_imports() -> None:
    from sot.backends.small_model._tidy import says_again, talks_about_task, tidy_expansion

    assert tidy_expansion("2. Sleep well: Rest eight hours.", "Sleep well", 1) == "Rest eight hours."
    assert says_again("Rest eight hours.", ["rest eight hours"])
    assert talks_about_task("This answer has three points.", "Sleep well", "How do I sleep?")
