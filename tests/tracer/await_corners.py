"""Coroutine, ``await`` and async generator corner cases: each function runs coroutines (by
``asyncio.run`` or by hand with ``send``/``throw``/``close``) and returns what a plain run
returns (compared by ``test_await``). ``ALL``: (function, arguments)."""
import asyncio
import types

ALL = []


def corner(*args):
    def register(fn):
        ALL.append((fn, args))
        return fn
    return register


@types.coroutine
def suspend(tag=None):
    """A bare suspension point: yields ``tag`` to whoever drives the coroutine."""
    got = yield tag
    return got


def drive(coro, sends=()):
    """Run ``coro`` by hand: ``send`` each of ``sends`` (None first), then None until it
    returns; (what it yielded, its value)."""
    yielded = []
    sends = list(sends)
    try:
        while True:
            yielded.append(coro.send(sends.pop(0) if sends else None))
    except StopIteration as stop:
        return yielded, stop.value


async def scaled(x, k):
    await suspend()
    return x * k


async def chain(x):
    a = await scaled(x, 2.0)
    b = await scaled(a + 1.0, 3.0)
    return a * b


@corner(0.7)
def await_chain_by_send(x):
    return drive(chain(x))


@corner(0.7)
def sent_values_flow_through_awaits(x):
    async def adder(x):
        total = x
        for _ in range(3):
            total = total + await suspend("more")
        return total
    return drive(adder(x), [None, x, 2.0 * x, 3.0])


@corner(0.7)
def asyncio_run_chain(x):
    return asyncio.run(chain(x))


@corner(0.7)
def gather_of_traced_coroutines(x):
    async def main(x):
        a, b, c = await asyncio.gather(scaled(x, 2.0), chain(x), scaled(x, x))
        return a + b * c
    return asyncio.run(main(x))


@corner(0.7)
def create_task_and_await_it(x):
    async def main(x):
        task = asyncio.create_task(chain(x))
        other = await scaled(x, 5.0)
        return await task + other
    return asyncio.run(main(x))


@corner(3)
def task_cancelled_while_awaiting(n):
    log = []

    async def slow(n):
        try:
            for i in range(n):
                log.append(i)
                await asyncio.sleep(0)
            await asyncio.sleep(10)
        finally:
            log.append("cleanup")

    async def main(n):
        task = asyncio.create_task(slow(n))
        for _ in range(n + 1):
            await asyncio.sleep(0)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            log.append("cancelled")
        return task.cancelled()
    return asyncio.run(main(n)), log


@corner(2.0)
def cancellation_caught_inside_the_task(x):
    async def stubborn(x):
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            return x * 3.0
        return 0.0

    async def main(x):
        task = asyncio.create_task(stubborn(x))
        await asyncio.sleep(0)
        task.cancel()
        return await task
    return asyncio.run(main(x))


@corner(0.5)
def throw_into_an_awaiting_coroutine(x):
    async def catcher(x):
        seen = []
        for _ in range(2):
            try:
                await suspend("waiting")
            except KeyError as exc:
                seen.append(str(exc))
                x = x * 2.0
        return x, seen
    c = catcher(x)
    first = c.send(None)
    second = c.throw(KeyError("k"))
    try:
        c.throw(KeyError("j"))
    except StopIteration as stop:
        return first, second, stop.value


@corner(0.5)
def throw_caught_two_awaits_down(x):
    async def inner(x):
        try:
            await suspend("inner")
        except ValueError:
            return x + 10.0
        return x

    async def outer(x):
        got = await inner(x)
        await suspend("after")
        return got * 2.0
    c = outer(x)
    first = c.send(None)
    second = c.throw(ValueError("into inner"))   # inner returns: outer goes on
    return first, second, drive(c)


@corner(0.5)
def throw_not_caught_leaves_the_coroutine(x):
    c = chain(x)
    c.send(None)
    try:
        c.throw(RuntimeError("stop"))
    except RuntimeError as exc:
        return "raised", str(exc), c.cr_frame is None


@corner(1.5)
def exception_from_awaited_coroutine_caught(x):
    async def failing(x):
        await suspend()
        raise ValueError(f"bad {x}")

    async def main(x):
        try:
            await failing(x)
        except ValueError as exc:
            return str(exc), x * 2.0
    return drive(main(x))


@corner(1.5)
def future_exception_raised_at_await(x):
    async def main(x):
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        loop.call_soon(fut.set_exception, KeyError("from the loop"))
        try:
            await fut
        except KeyError as exc:
            return x * 4.0, str(exc)
    return asyncio.run(main(x))


@corner(1.5)
def future_result_set_by_traced_code(x):
    async def setter(fut, x):
        await asyncio.sleep(0)
        fut.set_result(x * x)

    async def main(x):
        fut = asyncio.get_running_loop().create_future()
        task = asyncio.create_task(setter(fut, x))
        got = await fut
        await task
        return got + fut.result()
    return asyncio.run(main(x))


async def numbers(x, n):
    for i in range(n):
        yield x * i
        await asyncio.sleep(0)
    yield x * x


@corner(0.6)
def async_for_over_an_async_generator(x):
    async def main(x):
        total = 0.0
        async for v in numbers(x, 3):
            total += v * v
        return total
    return asyncio.run(main(x))


@corner(0.6)
def async_for_by_hand(x):
    async def plain(x):
        for i in range(3):
            yield x + i

    async def main(x):
        return [v * 2.0 async for v in plain(x)]
    return drive(main(x))


@corner(4)
def async_for_over_a_generator_that_raises(n):
    async def breaking(n):
        for i in range(n):
            if i == 2:
                raise ValueError(f"broke at {i}")
            yield i

    async def main(n):
        got = []
        try:
            async for v in breaking(n):
                got.append(v)
        except ValueError as exc:
            got.append(str(exc))
        return got
    return asyncio.run(main(n))


@corner(5)
def aclose_runs_the_finally(n):
    log = []

    async def guarded(n):
        try:
            for i in range(n):
                yield i
        finally:
            log.append("finally")
            await asyncio.sleep(0)
            log.append("after await in finally")

    async def main(n):
        g = guarded(n)
        async for v in g:
            if v == 2:
                break
        log.append("broke")
        await g.aclose()
        return v
    return asyncio.run(main(n)), log


@corner(5)
def unfinished_async_generator_finalised_by_asyncio(n):
    log = []

    async def guarded(n):
        try:
            for i in range(n):
                yield i
        finally:
            log.append("finalised")

    async def main(n):
        async for v in guarded(n):
            if v == 1:
                break
        log.append("returning")
        return v
    return asyncio.run(main(n)), log


@corner(0.5)
def asend_athrow_aclose(x):
    async def echo(x):
        y = x
        while True:
            try:
                y = (yield y * 2.0) or y
            except KeyError:
                y = y + 100.0

    async def main(x):
        g = echo(x)
        a = await g.__anext__()
        b = await g.asend(x * 3.0)      # the sent value flows into the generator
        c = await g.athrow(KeyError)
        await g.aclose()
        return a, b, c
    return asyncio.run(main(x))


@corner(0.5)
def async_generator_delegating_to_another(x):
    async def leaves(x):
        for k in (1.0, 2.0):
            await asyncio.sleep(0)
            yield x * k

    async def tree(x):
        async for v in leaves(x):
            yield v + 1.0
        async for v in leaves(x * 2.0):
            yield v - 1.0

    async def main(x):
        return [v async for v in tree(x)]
    return asyncio.run(main(x))


class Resource:
    def __init__(self, log, suppress):
        self.log, self.suppress = log, suppress

    async def __aenter__(self):
        self.log.append("enter")
        await asyncio.sleep(0)
        return 2.0

    async def __aexit__(self, kind, exc, tb):
        self.log.append(("exit", kind.__name__ if kind else None))
        await asyncio.sleep(0)
        return self.suppress


@corner(0.5)
def async_with_normal_exit(x):
    async def main(x):
        log = []
        async with Resource(log, False) as k:
            y = x * k
        return y, log
    return asyncio.run(main(x))


@corner(0.5)
def async_with_suppressing_an_exception(x):
    async def main(x):
        log = []
        y = x
        async with Resource(log, True):
            y = x * 3.0
            raise KeyError("inside")
        return y, log
    return asyncio.run(main(x))


@corner(0.5)
def async_with_letting_an_exception_out(x):
    async def main(x):
        log = []
        try:
            async with Resource(log, False):
                raise KeyError("inside")
        except KeyError:
            log.append("caught")
        return x, log
    return asyncio.run(main(x))


@corner(1.0)
def await_in_a_while_loop(x):
    async def accumulate(x):
        total, i = 0.0, 0
        while i < 5:
            total = total + await scaled(x, float(i))
            i += 1
        return total
    return drive(accumulate(x))


@corner(2.0)
def coroutine_returning_without_suspending(x):
    async def quick(x):
        return x * 3.0
    return drive(quick(x))


@corner(2.0)
def coroutine_closed_before_finishing(x):
    log = []

    async def closable(x):
        try:
            await suspend("open")
            log.append("not reached")
        finally:
            log.append("closed")
        return x
    c = closable(x)
    c.send(None)
    c.close()
    return log, c.cr_frame is None


class Ticket:
    """An awaitable that is not a coroutine: ``__await__`` is a plain generator."""

    def __init__(self, value):
        self.value = value

    def __await__(self):
        got = yield "ticket"
        return self.value * (got or 1.0)


@corner(1.5)
def await_a_custom_awaitable(x):
    async def main(x):
        a = await Ticket(x)
        b = await Ticket(a)
        return a + b
    return drive(main(x), [None, 2.0, 3.0])


@corner(8)
def async_recursion(n):
    async def fib(n):
        if n < 2:
            await asyncio.sleep(0)
            return n
        a = await fib(n - 1)
        b = await fib(n - 2)
        return a + b
    return asyncio.run(fib(n))


@corner(4)
def queue_producer_consumer(n):
    async def producer(q, n):
        for i in range(n):
            await q.put(i * 1.5)
        await q.put(None)

    async def consumer(q):
        got = []
        while (item := await q.get()) is not None:
            got.append(item)
        return got

    async def main(n):
        q = asyncio.Queue(maxsize=1)
        _, got = await asyncio.gather(producer(q, n), consumer(q))
        return got
    return asyncio.run(main(n))


@corner(0.25)
def wait_for_and_event(x):
    async def waiter(event, x):
        await event.wait()
        return x * 8.0

    async def main(x):
        event = asyncio.Event()
        task = asyncio.create_task(waiter(event, x))
        await asyncio.sleep(0)
        event.set()
        return await asyncio.wait_for(task, timeout=5.0)
    return asyncio.run(main(x))


@corner(1.0)
def await_in_finally_after_return(x):
    log = []

    async def main(x):
        try:
            return x * 2.0
        finally:
            await asyncio.sleep(0)
            log.append("finally ran")
    return asyncio.run(main(x)), log


@corner(0.3)
def iterable_coroutine_in_a_coroutine(x):
    @types.coroutine
    def legacy(x):
        got = yield "legacy"
        return x + got

    async def main(x):
        return await legacy(x) * 2.0
    return drive(main(x), [None, 5.0])


@corner(0.5)
def throw_answered_by_the_awaited_coroutine(x):
    async def inner(x):
        try:
            await suspend()
        except KeyError:
            x = x * 3.0
        await suspend(x)                 # the item answering the throw
        return x

    async def outer(x):
        return await inner(x) + 1.0
    c = outer(x)
    c.send(None)
    answer = c.throw(KeyError)           # C hands inner's item straight back
    return answer * 2.0


@corner(0.7)
def task_group_with_a_failing_task(x):
    async def failing():
        await asyncio.sleep(0)
        raise KeyError("in group")

    async def main(x):
        async with asyncio.TaskGroup() as tg:
            a = tg.create_task(scaled(x, 2.0))
            b = tg.create_task(chain(x))
        try:
            async with asyncio.TaskGroup() as tg:
                tg.create_task(failing())
                tg.create_task(asyncio.sleep(10))   # cancelled by the failure
        except* KeyError as group:
            caught = [str(e) for e in group.exceptions]
        return a.result() * b.result(), caught
    return asyncio.run(main(x))


@corner(0.7)
def wait_for_timing_out(x):
    async def main(x):
        try:
            await asyncio.wait_for(asyncio.sleep(10), 0.001)
        except TimeoutError:
            return x * 2.0
    return asyncio.run(main(x))
