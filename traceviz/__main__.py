"""``python -m traceviz``: the same as the ``traceviz`` command."""

from traceviz.cli.app import main

if __name__ == "__main__":
    main()
