"""Semantic errors of the compiler (each names the node and the statement's place) and the hostile
corpus (nothing from the model text, data or inits reaches generated code)."""
import math

import numpy as np
import pytest

import dcgraph.bugs as B
from dcgraph.bugs.errors import BUGSError, BUGSModelError

BAD = [  # (model, data, expected message, line, col)
    ("model { y ~ dnorm(mu, 1) }", {"y": 1.0}, "undefined variable 'mu'", 1, 19),
    ("model {\n x ~ dnorm(0, 1)\n x ~ dnorm(1, 1) }", {}, "node x is defined twice (also at line 2)", 3, 2),
    ("model { for (i in 1:3) { x[i] <- i }\n for (j in 2:3) { x[j] <- 2 * j }\n y ~ dnorm(x[1], 1) }",
     {}, "node x[2] is defined twice (also at line 1)", 2, 19),
    ("model { a <- b + 1\n b <- a * 2\n c ~ dnorm(a, 1) }", {},
     "directed cycle among logical nodes: b -> a -> b", 2, 2),
    ("model { x ~ dnorm(y, 1)\n y ~ dnorm(x, 1) }", {},
     "conditionally specified prior: the nodes y -> x -> y depend on each other in a cycle, "
     "which defines no joint density", 2, 2),
    ("model { for (i in 1:3) { m[i] <- s[i] * 2\n s[i] ~ dnorm(m[i], 1) } }", {},
     "conditionally specified prior: the nodes s[1] -> m[1] -> s[1]", 2, 2),
    ("model { for (i in 1:4) { y[i] ~ dnorm(mu[i], 1) }\n for (i in 1:3) { mu[i] ~ dnorm(0, 1) } }",
     {"y": [1, 2, 3, 4]}, "index 4 out of range for 'mu' (dimension 1 is 1..3)", 1, 39),
    ("model { for (i in 1:N) { y[i] ~ dnorm(0, 1) } }", {"N": 4, "y": [1, 2, 3]},
     "index 4 out of range for 'y' (dimension 1 is 1..3)", 1, 26),
    ("model { y ~ dnorm(x[1, 2], 1) }", {"x": [1.0, 2.0]},
     "'x' has 1 dimension(s) (shape (2,)) but is used with 2 index(es)", 1, 19),
    ("model { y ~ dnorm(0, 1) }", {"y": [1.0, 2.0]},
     "'y' has 1 dimension(s) (shape (2,)) but is used with 0 index(es)", 1, 9),
    ("model { m <- 2 * a\n y ~ dnorm(m, 1) }", {"y": 1.0, "m": 3.0, "a": 1.0},
     "data given for the logical node m", 1, 9),
    ("model { for (i in 1:N) { y[i] ~ dnorm(0, 1) } }", {"N": 2.5},
     "upper bound of loop 'i' must be a whole number, got 2.5", 1, 21),
    ("model { for (i in 1:N) { y[i] ~ dnorm(0, 1) } }", {"y": [1.0, 2.0]},
     "undefined variable 'N'", 1, 21),
    ("model { y ~ dnorm(x[2], 1) }", {"x": [1.0, float("nan")]},
     "undefined variable x[2]: no data and no statement defines it", 1, 19),
    ("model { for (i in 1:3) { y[i] ~ dnorm(mu[k[i] + 1], 1) }\n for (j in 1:3) { mu[j] ~ dnorm(0, 1) }\n"
     " for (i in 1:3) { k[i] ~ dcat(p[]) } }", {"p": [0.5, 0.5]},
     "index of 'mu' depends on the unobserved node k[1]: a stochastic index must be a discrete "
     "stochastic node itself (like T[i] ~ dcat(p[]))", 1, 39),
    ("model { for (i in 1:3) { y[i] ~ dnorm(mu[k[i]], 1) }\n for (j in 1:2) { mu[j] ~ dnorm(0, 1) }\n"
     " for (i in 1:3) { k[i] ~ dnorm(0, 1) } }", {},
     "a stochastic index must be a discrete stochastic node itself", 1, 39),
    ("model { for (i in 1:3) { y[i] ~ dnorm(mu[k[i], 1:2], 1) }\n"
     " for (j in 1:2) { mu[j, 1:2] ~ dmnorm(z[], T[,]) }\n for (i in 1:3) { k[i] ~ dcat(p[]) } }",
     {"p": [0.5, 0.5], "z": [0.0, 0.0], "T": [[1.0, 0.0], [0.0, 1.0]]},
     "'mu' mixes a range with a stochastic index", 1, 39),
    ("model { for (i in 1:3) { y[i] ~ dnorm(mu[k[i]], 1) }\n for (j in 1:2) { mu[j] ~ dnorm(0, 1) } }",
     {"k": [1, 2, 3]}, "index 3 out of range for 'mu' (dimension 1 is 1..2)", 1, 39),
    ("model { y ~ dnorm(0, 1)\n z <- y[2] }", {}, "'y' has 0 dimension(s) (shape ()) but is used with 1", 2, 7),
    ("model { y[1:2] ~ dnorm(0, 1) }", {}, "'dnorm' cannot define a block of nodes ('y')", 1, 9),
    ("model { for (i in 1:3) { y[i, 1:2] <- c[] * i }\n z ~ dnorm(y[2, 1], 1) }", {"c": [1.0, 2.0]},
     None, None, None),
    ("model { x[1] ~ dnorm(0, 1)\n for (i in 2:3) { x[i] ~ dnorm(s[i - 1, 2], 1)\n"
     " s[i - 1, 1:2] <- x[i - 1] * c[] } }", {"c": [1.0, 2.0]},
     "a block of nodes (vector or matrix) in a loop that cannot be vectorised is not supported",
     3, 2),
    ("model { for (i in 1:2) { y[i] ~ dnorm(0, 1) }\n z ~ dnorm(y[i], 1) }", {},
     "undefined variable 'i'", 2, 14),
    ("model { for (i in 1:2) { x[i] <- y[i] + 1\n y[i] ~ dnorm(x[i], 1) } }", {"y": [1.0, 2.0]},
     None, None, None),
    ("model { y ~ dnorm(0, 1)T(2, ) }", {}, None, None, None),
    ("model { x[2] ~ dnorm(0, 1)\n y ~ dnorm(x[1], 1) }", {},
     "undefined variable x[1]: no data and no statement defines it", 2, 12),
    ("model { y ~ dbin(p, n) \n p ~ dbeta(1, 1) }", {"y": 3.0, "n": float("nan")},
     "undefined variable n", 1, 21),
    ("model { for (i in 1:2) { y[i] ~ dnorm(0, 1) } }", {"y": [[1.0, 2.0]]},
     "'y' has 2 dimension(s) (shape (1, 2)) but is used with 1 index(es)", 1, 26),
    ("model { y ~ dnorm(0, 1)T(0, 1)\n}", {"y": 0.5}, None, None, None),
]


@pytest.mark.parametrize("model,data,message,line,col", BAD)
def test_bad_models(model, data, message, line, col):
    if message is None:                          # valid: compiles, finite
        m = B.compile(model, data)
        assert np.isfinite(m.logdensity(m.initial_values()))
        return
    with pytest.raises(BUGSModelError) as info:
        B.compile(model, data)
    err = info.value
    assert message in err.message
    if line is not None:
        assert (err.line, err.col) == (line, col)
        assert str(err).startswith(f"{line}:{col}: ")
        assert str(err).splitlines()[-1].strip() == "^"


def test_error_names_the_file(tmp_path):
    path = tmp_path / "bad.bug"
    path.write_text("model {\n  y ~ dnorm(mu, 1)\n}\n")
    with pytest.raises(BUGSError) as info:
        B.compile(str(path), {"y": 1.0})
    assert str(info.value).startswith(f"{path}:2:13: undefined variable 'mu'")


def test_unknown_inits_name():
    with pytest.raises(BUGSError, match="no variable 'tau' in the model"):
        B.compile("model { x ~ dnorm(0, 1) }", {}, {"tau": 1.0}).initial_values()


def test_logjoint_needs_every_parameter():
    m = B.compile("model { for (i in 1:2) { x[i] ~ dnorm(0, 1) } }", {})
    with pytest.raises(BUGSError, match=r"a value for x\[2\] is needed"):
        m.logjoint({"x": [0.0, float("nan")]})
    assert m.logjoint({"x": [0.0, 1.0]}) == pytest.approx(-math.log(2 * math.pi) - 0.5)


HOSTILE_NAMES = ["__import__", "os.system", "exec", "eval", "__builtins__", "np", "sp", "lp",
                 "theta", "p0", "k0", "t1", "rng", "open", "_merge", "None", "lambda.x"]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_compile_safely(name):
    text = f"model {{ {name} ~ dnorm(0, 1)\n y ~ dnorm({name}, 1) }}"
    try:
        m = B.compile(text, {"y": 0.5})
    except BUGSError as exc:                     # the grammar may refuse the name: clearly
        assert "1:" in str(exc)
        return
    src = m.source()
    if name not in ("np", "sp", "lp", "theta", "p0", "k0", "t1", "rng", "None", "exec", "eval", "open"):
        assert name not in src
    assert m.logdensity([0.25]) == pytest.approx(-math.log(2 * math.pi) - 0.25 ** 2 / 2 - 0.25 ** 2 / 2)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")      # 1e308 squared overflows, as it must
def test_hostile_data_never_reaches_code():
    data = {"y": 1.0, "__import__('os').system('echo pwned')": 1.0, "x\"; import os": 2.0}
    m = B.compile("model { y ~ dnorm(mu, 1)\n mu ~ dnorm(0, 1) }", data)
    assert "import" not in m.source() and "pwned" not in m.source()
    huge = B.compile("model { y ~ dnorm(mu, 1)\n mu ~ dnorm(0, 1e300) }", {"y": 1e308})
    assert not np.isnan(huge.logdensity([0.0]))


def test_hostile_model_texts():
    texts = ["model { y ~ dnorm(0, 1) }\nimport os", "model { y ~ dnorm(\"a\", 1) }",
             "model { y ~ dnorm(0, 1); os.system('ls') }", "model { y <- " + "(" * 500 + "1" + ")" * 500 + " }",
             "model { y ~ dnorm(1e999, 1) }", "model {\n y ~ dnorm(0,\n 1)\n\n\x00 }"]
    for text in texts:
        with pytest.raises(BUGSError):
            B.compile(text, {"y": 1.0})


def test_generated_code_has_no_builtins():
    m = B.compile("model { y ~ dnorm(mu, 1)\n mu ~ dnorm(0, 1) }", {"y": 1.0})
    assert m._gen.namespace["__builtins__"] == {}
