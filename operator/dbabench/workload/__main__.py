import sys
from pathlib import Path

from dbabench.workload.engine import main

if len(sys.argv) != 2:
    sys.exit("usage: python -m dbabench.workload CONFIG.json")
main(Path(sys.argv[1]))
