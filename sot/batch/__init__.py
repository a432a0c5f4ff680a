"""Batch evaluation of prompt sets: run, report, judge."""
