"""Starts short-lived children: each lives about 0.3 s burning CPU in a
function with a distinctive name, then exits. pyprofile must name their
frames although they are gone when it prints its report.

    python short_children.py COUNT
"""
import subprocess
import sys

CHILD = """
import time
def short_lived_child_burn():
    end = time.monotonic() + 0.3
    while time.monotonic() < end:
        sum(i * i for i in range(2000))
short_lived_child_burn()
"""

for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    subprocess.run([sys.executable, "-c", CHILD], check=True)
