import sys

from wildtable.cli import run

sys.exit(run())
