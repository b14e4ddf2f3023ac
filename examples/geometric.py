"""Geometric distribution by recursion: flip a biased coin until it comes up heads."""
import random

import dcgraph


def geometric(p):
    if random.random() < p:
        return 1
    return 1 + geometric(p)


def main():
    random.seed(7)
    return geometric(0.3)


if __name__ == "__main__":
    from dcgraph.views import show
    result, tape = dcgraph.track(main)
    show(tape, depth=None)
    print("flips:", result)
