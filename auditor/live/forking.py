"""May this process fork now? Only while no other thread runs: a thread holding a lock at the
fork leaves it held in the child for good. The deadline watchdog (auditor/live/bounded.py) is
the one exception: it outlives the requests it watched, and a forked child starts a watchdog
of its own (bounded registers that with `os.register_at_fork`), never touching the parent's.

Asked by one module only, the parallel seam (auditor/speed/parallel.py), which every fork goes
through; here beside bounded.py, whose watchdog it must know. Kept free of heavy imports: drift
forks its loader before it imports the Kubernetes client.
"""

from __future__ import annotations

import os
import threading

WATCHDOG = "kueue-gitops-deadlines"  # the name of bounded's watchdog thread


def alone() -> bool:
    """No thread runs but this one (and the watchdog), and the platform can fork."""
    if not hasattr(os, "fork"):
        return False
    me = threading.current_thread()
    return all(thread is me or thread.name == WATCHDOG for thread in threading.enumerate())
