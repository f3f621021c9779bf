"""``python -m subword``: until the full CLI lands, a demo of the encoder."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    from .cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main())
