"""Cold ``traceviz profile workloads/elementwise.py --modes all`` from a snapshot, timed.

``python timed_profile.py SNAPSHOT OUT LABEL`` (on the device machine, the wheels installed to
``/tmp/site``): fresh bytecode, Inductor and Triton cache folders for LABEL, the log in
``OUT/LABEL.log``, the run in ``OUT/LABEL``; prints the command's wall time. This is the script
that ran there (as ``.devsnap/timed_profile.py``), reformatted."""

import os
import subprocess
import sys
import time

snap, out, label = sys.argv[1], sys.argv[2], sys.argv[3]
env = dict(os.environ)
for k in ("XDG_CACHE_HOME", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"):
    env[k] = f"/tmp/{label}_{k.lower()}"
env["PYTHONPATH"] = f"/tmp/site:{snap}"
cmd = [sys.executable, "-m", "traceviz", "profile", "workloads/elementwise.py", "--modes", "all",
       "--out", f"{out}/{label}", "--force"]
t = time.monotonic()
with open(f"{out}/{label}.log", "w") as log:
    rc = subprocess.run(cmd, cwd=snap, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
print(f"{label}: rc {rc}, wall {time.monotonic() - t:.1f} s, "
      f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE')}")
