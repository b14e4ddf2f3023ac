"""Exceptions raised through ``track``: their own attributes kept, still picklable."""
import pickle

import pytest

import dcgraph


class Failed(Exception):
    pass


def fails(x):
    y = x + 1
    raise Failed(f"failed at {y}")


def test_the_tape_is_attached_to_an_exception():
    with pytest.raises(Failed) as info:
        dcgraph.track(fails, 1)
    tape = info.value.tape
    tape.lint()
    assert tape.raised and tape.find(kind="Raise")


def test_an_exceptions_own_tape_attribute_is_kept():
    class WithTape(Exception):
        pass

    def f():
        exc = WithTape("x")
        exc.tape = "the user's"
        raise exc

    with pytest.raises(WithTape) as info:
        dcgraph.track(f)
    assert info.value.tape == "the user's"

    class TapeProperty(Exception):
        @property
        def tape(self):
            return "a property"

    def g():
        raise TapeProperty()

    with pytest.raises(TapeProperty) as info:
        dcgraph.track(g)
    assert info.value.tape == "a property"


def test_an_exception_raised_through_track_pickles():
    with pytest.raises(Failed) as info:
        dcgraph.track(fails, 1)
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is Failed and again.args == ("failed at 2",)
    with pytest.raises(ValueError, match="tape of fails was pickled"):
        len(again.tape)


def test_an_exception_crosses_a_process_pool():
    import concurrent.futures
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        future = pool.submit(_traced_failure, 1)
        with pytest.raises(Failed, match="failed at 2"):
            future.result()


def _traced_failure(x):
    return dcgraph.track(fails, x)
