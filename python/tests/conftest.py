"""Puts python/ on the import path, so `import braid` finds python/braid without installing."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
