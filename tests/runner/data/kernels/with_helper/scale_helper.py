# Imported by uses_helper.py from beside it.
FACTOR = 3.0
