"""Models shared by the random-variable analysis tests."""

MU = (-1.0, 2.0)
TRANS = ((0.7, 0.3), (0.2, 0.8))


def hmm(rng, T=6):
    """A 6-step two-state HMM written with element writes: z[t] ~ choice, x[t] ~ normal."""
    z = [0] * T
    x = [0.0] * T
    z[0] = rng.choice(2)
    x[0] = rng.normal(MU[z[0]], 1.0)
    for t in range(1, T):
        if z[t - 1] == 0:
            p = TRANS[0]
        else:
            p = TRANS[1]
        z[t] = rng.choice(2, p=p)
        x[t] = rng.normal(MU[z[t]], 1.0)
    return z, x
