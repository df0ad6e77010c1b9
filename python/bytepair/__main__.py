"""``python -m bytepair``: the ``bytepair`` command, for when its script is not on PATH."""

from bytepair.cli import main

if __name__ == "__main__":
    main()
