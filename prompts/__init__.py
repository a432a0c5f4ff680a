"""Prompt templates (jinja2), installed as package data of ``sot.prompts``."""
