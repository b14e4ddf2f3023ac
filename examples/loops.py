"""Loops with branches: running statistics of a sequence, and where it rises."""
import dcgraph


def running_stats(xs):
    count, total, rises = 0, 0.0, []
    for i, x in enumerate(xs):
        count += 1
        total += x
        if i > 0 and x > xs[i - 1]:
            rises.append(i)
    return total / count, rises


def main():
    xs = [((7 * i) % 11) / 10 for i in range(200)]
    return running_stats(xs)


if __name__ == "__main__":
    from dcgraph.views import show
    result, tape = dcgraph.track(main)
    show(tape)
    print("mean and first rises:", result[0], result[1][:5])
