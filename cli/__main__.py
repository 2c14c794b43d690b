import sys

from wildtable.cli import main

sys.exit(main())
