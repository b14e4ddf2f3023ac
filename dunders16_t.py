import math, dcgraph
class Vec:
    def __init__(self, x, y):
        self.x, self.y = x, y
    def __add__(self, o):
        if not isinstance(o, Vec):
            return NotImplemented
        return Vec(self.x + o.x, self.y + o.y)
    def __radd__(self, o):
        return Vec(self.x + o, self.y + o)
    def __neg__(self):
        return Vec(-self.x, -self.y)
    def __getitem__(self, k):
        return self.x if k == 0 else self.y
    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y
def f(a):
    v = Vec(a, 2.0)
    w = 1.0 + v + Vec(a, a)
    u = -w
    return u[0] * u[1]
r, tape = dcgraph.track(f, 1.5)
print(r)
print(tape)
tape.lint()
print(dcgraph.grad(f)(1.5))
