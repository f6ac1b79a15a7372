"""``python -m mlir_rl.cli``: the ``mlir-rl`` command."""
import sys

from mlir_rl.cli import main

sys.exit(main())
