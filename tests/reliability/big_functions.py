"""Generated long functions with many locals, branches, loops and a try block."""
import random
def big_source(lines=1600, nlocals=400, seed=0, loops=True):
    rng = random.Random(seed)
    names = [f"v{k}" for k in range(nlocals)]
    out = ["def big(x):"]
    for n in names:
        out.append(f"    {n} = x")
    depth = 1
    while len(out) < lines:
        a, b, c = rng.sample(names, 3)
        r = rng.random()
        ind = "    " * depth
        if r < 0.10 and depth < 5:
            out.append(f"{ind}if {a} > {b}:")
            depth += 1
            out.append("    " * depth + f"{c} = {a} + 1")
        elif r < 0.16 and depth < 5 and loops:
            out.append(f"{ind}for i{depth} in range(2):")
            depth += 1
            out.append("    " * depth + f"{c} = {a} + i{depth-1}")
        elif r < 0.30 and depth > 1:
            depth -= 1
            out.append("    " * depth + f"{c} = {a} - {b}")
        else:
            out.append(f"{ind}{c} = {a} * 0.5 + {b}")
    out.append("    return " + " + ".join(names[:10]))
    return "\n".join(out) + "\n"

def big_try_source(lines=1600, nlocals=400, seed=0):
    src = big_source(lines, nlocals, seed).splitlines()
    head, body, ret = src[0], src[1:-1], src[-1]
    out = [head, "    try:"] + ["    " + line for line in body]
    out += ["    except ValueError:", "        pass", ret]
    return "\n".join(out) + "\n"
