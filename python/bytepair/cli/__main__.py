"""``python -m bytepair.cli``."""

from bytepair.cli import main

if __name__ == "__main__":
    main()
