"""Deterministic functions traced by the view tests (their line numbers appear in goldens)."""
import numpy as np


def geom(u, k, p):
    if u[k] < p:
        return 1
    return 1 + geom(u, k + 1, p)


def loop_sum(n):
    acc = []
    s = 0
    for i in range(n):
        if i % 2:
            s += i * i
        else:
            acc.append(s)
    return s, acc


def logistic(X, w):
    z = X @ w
    p = 1 / (1 + np.exp(-z))
    return p.mean()


def push(items, x):
    items.append(x)
    return len(items)


def caller_mutates(n):
    items = []
    k = push(items, n)
    return items[0] + k


def big_loop(n):
    s = 0
    for i in range(n):
        s += i * i - 1
    return s
