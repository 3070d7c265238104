"""Allow `python -m auditor`."""

from auditor.cli.main import main

main()
