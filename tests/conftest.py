import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

pytest_plugins = ["conftest_fixtures"]
