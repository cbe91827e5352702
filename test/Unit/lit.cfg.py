# -*- Python -*-
import os

import lit.formats

config.name = "PARTITION-Unit"
config.suffixes = []
config.test_exec_root = os.path.join(config.partition_obj_root, "unittests")
config.test_source_root = config.test_exec_root
# Runs every executable whose name ends in "Tests" under <build>/unittests.
config.test_format = lit.formats.GoogleTest(".", "Tests")
