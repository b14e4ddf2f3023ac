"""Logistic regression by a few steps of gradient descent, in NumPy."""
import numpy as np

import dcgraph


def loss(w, X, y):
    p = 1 / (1 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def fit(X, y, steps=6, lr=0.5):
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(X @ w)))
        w = w - lr * X.T @ (p - y) / len(y)
    return w, loss(w, X, y)


def data(n=40):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(float)
    return X, y


TRACE = (fit, data())

if __name__ == "__main__":
    from dcgraph.views import show
    (w, final), tape = dcgraph.track(TRACE[0], *TRACE[1])
    show(tape)
    print("weights:", w, "loss:", final)
