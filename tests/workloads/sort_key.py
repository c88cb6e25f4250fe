"""Native code calling back into Python: sorted() calls key_of() for every
element, so key_of's frames sit above sorted's C frames, which sit above
sort_with_key's. Runs for SECONDS (default 60).

    python sort_key.py [SECONDS]
"""
import sys
import time


def key_of(x):
    s = 0
    for i in range(30):
        s += i
    return -x


def sort_with_key():
    return sorted(range(20000), key=key_of)


end = time.time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 60)
while time.time() < end:
    sort_with_key()
