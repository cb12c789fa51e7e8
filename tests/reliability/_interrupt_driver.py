"""`dali-migrate convert` with the slowed-down real codemod (see test_interrupt.py).

Usage: python _interrupt_driver.py JOBS DIR"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _rel_helpers import slow_convert  # noqa: E402
from dali_migrate.cli import main  # noqa: E402

if __name__ == "__main__":
    jobs, directory = sys.argv[1], sys.argv[2]
    main(["convert", "--quiet", "--jobs", jobs, directory], obj={"convert": slow_convert},
         prog_name="dali-migrate")
