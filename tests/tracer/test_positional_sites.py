"""Self-call sites that bind every positional parameter (``SiteCache.positional``): they test
no defaults, and take only a callee whose code binds every positional parameter there, so a
callee whose defaults a call reads is decided by the hook, replaced defaults seen."""
import dcgraph
from dcgraph.tracer import inline_calls, roots
from dcgraph.tracer.copies import instrumented_copy


def _site_caches(f):
    """The ``SiteCache``s of ``f``'s copy's calls of ``f`` itself."""
    return list(roots._self_sites(f, instrumented_copy(f)))


def binds_all(n, step):
    return n if n <= 0 else binds_all(n - step, step)


def omits_default(n, step=1):
    return n if n <= 0 else omits_default(n - step)


def by_keyword(n, step):
    return n if n <= 0 else by_keyword(n - step, step=step)


def unpacks(n, step):
    return n if n <= 0 else unpacks(*(n - step, step))


def each(n, k):
    if k == "stop":
        return n
    total = 0
    for i in range(n):
        if i == 2:
            padded.__defaults__ = (5,)
        total += each(i, "stop")        # the self-site; ``each`` is rebound to ``padded``
    return total


def padded(n, k, extra=1):              # a third positional parameter: its default is read
    return n * extra


def test_which_self_sites_bind_every_positional_parameter():
    assert [c.positional for c in _site_caches(binds_all)] == [2]
    assert [c.positional for c in _site_caches(omits_default)] == [None]
    assert [c.positional for c in _site_caches(by_keyword)] == [None]
    assert [c.positional for c in _site_caches(unpacks)] == [None]
    for f in (binds_all, omits_default, by_keyword, unpacks):
        for _ in range(2):              # decided, then a remembered root's filled sites
            result, tape = dcgraph.track(f, 5, 1)
            assert result == 0
            tape.lint()
            assert str(tape).count("NestedCall") == str(
                dcgraph.track(f, 5, 1)[1]).count("NestedCall")


def test_a_callee_reading_its_defaults_is_not_taken_at_a_site_that_tests_none():
    original = each
    try:
        (site,) = _site_caches(original)
        assert site.positional == 2
        globals()["each"] = padded      # the copy's site now calls ``padded`` (3 parameters)
        for _ in range(2):
            padded.__defaults__ = (1,)
            result, tape = dcgraph.track(original, 5, "go")
            assert result == 0 + 1 + 5 * (2 + 3 + 4)      # the defaults replaced mid-run
            tape.lint()
            calls = [n for n in tape.nodes if n.kind == "NestedCall"]
            assert [n.value for n in calls] == [0, 1, 10, 15, 20]
            assert site.entry is inline_calls.NO_SITE_ENTRY
    finally:
        globals()["each"] = original
        padded.__defaults__ = (1,)
    result, tape = dcgraph.track(each, 4, "go")
    assert result == 0 + 1 + 2 + 3
    tape.lint()


def double(x):
    return 2 * x


def scale(x, k=2):
    return k * x


def calls_helpers(n):
    total = 0
    for i in range(n):
        if i == 2:
            scale.__defaults__ = (5,)
        total += double(i) + scale(i) + scale(i, 3)
    return total


def test_sites_of_other_python_functions_are_marked_where_every_parameter_is_bound():
    from dcgraph.tracer.instrument import instrument
    info = instrument(calls_helpers.__code__, False, calls_helpers.__globals__, True)
    assert sorted(c.positional for c in info.site_caches.values()
                  if c.positional is not None) == [1, 2]        # double(i), scale(i, 3)
    assert len(info.site_caches) == 3 and not info.self_sites
    try:
        for _ in range(2):
            scale.__defaults__ = (2,)
            result, tape = dcgraph.track(calls_helpers, 5)
            assert result == sum(2 * i + 3 * i for i in range(5)) + 2 * (0 + 1) + 5 * (2 + 3 + 4)
            tape.lint()
    finally:
        scale.__defaults__ = (2,)
