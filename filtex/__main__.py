"""``python -m filtex``: the ``filtex`` command line."""
import sys

from .cli import main

sys.exit(main())
