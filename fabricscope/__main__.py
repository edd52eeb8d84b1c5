"""`python -m fabricscope`: the command line, as the `fabricscope` script."""

from fabricscope.cli import main

if __name__ == "__main__":
    main()
