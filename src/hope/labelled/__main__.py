import sys

from hope.labelled.cli import main

sys.exit(main())
