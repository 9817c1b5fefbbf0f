"""Sets the training program's globals: each bare argument is a Python file to run, each
--key=value replaces a global of the same type (a fixture in nanoGPT's shape)."""

import sys
from ast import literal_eval

for arg in sys.argv[1:]:
    if "=" not in arg:
        exec(open(arg).read())  # noqa: SIM115
    else:
        key, val = arg[2:].split("=", 1)
        if key in globals():
            globals()[key] = literal_eval(val)
