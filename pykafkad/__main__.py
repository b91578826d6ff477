import sys

from pykafkad.cli import main

sys.exit(main())
