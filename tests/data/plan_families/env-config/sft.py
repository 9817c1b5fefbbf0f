"""Supervised fine-tuning from a YAML recipe (a fixture)."""

import sys

print(sys.argv)
