"""``python -m benchmarks.adversarial --out FILE.json [--jobs N] [--only CATEGORY|ID-PREFIX]``"""

from __future__ import annotations

import sys

from benchmarks.adversarial.campaign import main

if __name__ == "__main__":
    sys.exit(main())
