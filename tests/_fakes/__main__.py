"""``cd tests && python -m _fakes [--token-delay S]``: serve the default script, for trying the CLI by hand."""

from .server import main

main()
