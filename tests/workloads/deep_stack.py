"""Burns CPU 300 frames deep, to check that deep stacks are cut visibly."""
import sys


def deep_recursion(n):
    if n == 0:
        while True:
            sum(i * i for i in range(1000))
    deep_recursion(n - 1)


sys.setrecursionlimit(2000)
deep_recursion(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
