"""``python -m mlir_rl``: the ``mlir-rl`` command."""
import sys

from mlir_rl.cli import main

sys.exit(main())
