"""`python -m fabricscope`: the command line, as the `fabricscope` script (same exit codes)."""

import sys

from fabricscope.cli import main

if __name__ == "__main__":
    sys.exit(main())
