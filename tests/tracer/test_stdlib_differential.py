"""Differential tests of the tracer on the standard library's pure-Python code.

For every case: the untraced call's outcome (its value, or its exception's type and message) must
equal the traced call's outcome on each of 120 repeated traced runs (CPython's adaptive
interpreter specialises instructions after a few executions; a bad rewrite often only crashes
then), the tape of the last run must lint and build, and calling the function untraced afterwards
must still give the same outcome (instrumented code never leaks into the original function).

By default only numpy/scipy/dcgraph are primitive, so every stdlib Python function reached from
the root is traced into (generators are recorded as primitive calls by design).
"""
from __future__ import annotations

import ast
import base64
import bisect
import calendar
import collections
import colorsys
import copy
import dataclasses
import difflib
import email.utils
import fnmatch
import fractions
import functools
import graphlib
import heapq
import html
import inspect
import ipaddress
import json
import json.decoder
import json.encoder
import json.scanner
import operator
import posixpath
import pprint
import random
import re
import shlex
import statistics
import string
import textwrap
import tomllib
import types
import urllib.parse
import _pydecimal
import argparse
import configparser
import contextlib
import csv
import email.header
import enum
import getopt
import gettext
import http.cookies
import mimetypes
import pickle
import reprlib
import typing
import uuid

import pytest

import dcgraph
from dcgraph import NestedCall, Raise, Return
from dcgraph.tracer.instrument import instrument

RUNS = 120

TEXT = ("The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs. "
        "Sphinx of black quartz, judge my vow! How vexingly quick daft zebras jump. ") * 3
INDENTED = "    def f(x):\n        return x + 1\n\n    # done\n      tail\n"
DATA = [2.5, 3.25, 5.5, 1.0, 7.75, 3.25, 4.0, 9.5, 3.25, 6.0, 2.0]
XS = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
YS = [2.1, 3.9, 6.2, 8.1, 9.8, 12.2, 13.9, 16.1]
OLD = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n".splitlines(keepends=True)
NEW = "one\n2\nthree\nfour\nfive and a half\nsix\nseven\neight\n".splitlines(keepends=True)
NESTED = {"a": [1, 2, {"b": (3, 4, [5, 6])}], "c": {"d": {"e": [7, {"f": 8}]}}, "g": "text",
          "h": None, "i": 1.5, "j": True}
JSON_TEXT = ('{"name": "dc\\u00e9graph", "list": [1, 2.5, -3e2, true, false, null], '
             '"nested": {"a": {"b": [{"c": "d\\n\\t\\"q\\""}]}}, "empty": {}, "arr": []}')


# -- wrappers: the traced root is always a plain (non-generator) Python function ---------------

def fraction_arith(a, b, c, d):
    x = fractions.Fraction(a, b)
    y = fractions.Fraction(c, d)
    z = (x + y) * (x - y) / (y ** 2) + x // y - (x % y)
    return z, z.limit_denominator(10), fractions.Fraction("3.1415926").limit_denominator(100), \
        fractions.Fraction.from_float(0.125), x < y, round(z, 3)


def sequence_matcher(a, b):
    sm = difflib.SequenceMatcher(None, a, b)
    return sm.ratio(), sm.quick_ratio(), sm.get_opcodes(), sm.get_matching_blocks()


def unified_diff(a, b):
    return list(difflib.unified_diff(a, b, "old", "new", n=1))


def ndiff(a, b):
    return list(difflib.ndiff(a, b))


def json_encode_pure(obj, **kw):
    # iterencode(_one_shot=False) always takes the pure-Python _make_iterencode path
    return "".join(json.JSONEncoder(**kw).iterencode(obj))


def json_decode_pure(text):
    dec = json.JSONDecoder()
    dec.parse_string = json.decoder.py_scanstring
    dec.scan_once = json.scanner.py_make_scanner(dec)
    return dec.decode(text)


def ip_hosts(net):
    return [str(h) for h in ipaddress.ip_network(net).hosts()]


def ip_summarize(first, last):
    return [str(n) for n in ipaddress.summarize_address_range(ipaddress.ip_address(first),
                                                              ipaddress.ip_address(last))]


def ip_collapse(nets):
    return [str(n) for n in ipaddress.collapse_addresses(ipaddress.ip_network(n) for n in nets)]


def ip_address_facts(addr):
    a = ipaddress.ip_address(addr)
    return (str(a), int(a), a.version, a.is_private, a.is_global, a.is_loopback,
            a.reverse_pointer, str(a + 5))


def template_substitute(tpl, **kw):
    return string.Template(tpl).substitute(**kw)


def formatter_format(fmt, *args, **kw):
    return string.Formatter().format(fmt, *args, **kw)


def colors(r, g, b):
    h, s, v = colorsys.rgb_to_hsv(r, g, b)
    hl = colorsys.rgb_to_hls(r, g, b)
    yiq = colorsys.rgb_to_yiq(r, g, b)
    return (h, s, v), hl, yiq, colorsys.hsv_to_rgb(h, s, v), colorsys.hls_to_rgb(*hl), \
        colorsys.yiq_to_rgb(*yiq)


def heap_merge(*seqs):
    return list(heapq.merge(*seqs))


def heap_ops(values):
    h = []
    for v in values:
        heapq.heappush(h, v)
    out = [heapq.heappop(h) for _ in range(len(values) // 2)]
    return out, heapq.nsmallest(3, values, key=lambda v: -v), heapq.nlargest(2, values)


def bisect_ops(values, probes):
    a = sorted(values)
    out = [(bisect.bisect_left(a, p), bisect.bisect_right(a, p)) for p in probes]
    for p in probes:
        bisect.insort(a, p)
    return out, a


def b64_pure(data):
    return (base64.b32encode(data), base64.b32decode(base64.b32encode(data)),
            base64.b85encode(data), base64.a85encode(data), base64.b16encode(data),
            base64.b32hexencode(data))


def urlparse_parts(url):
    p = urllib.parse.urlparse(url)
    return tuple(p), p.hostname, p.port, urllib.parse.parse_qs(p.query), \
        urllib.parse.urljoin(url, "../x/y?z=1")


def reduce_lambda(values):
    return functools.reduce(lambda acc, v: acc * 31 + v if v % 2 else acc - v, values, 7)


def itertools_recipes(values, n):
    # pairwise, chunked, running sums, unique_everseen, sliding window: written inline
    pairs = [(values[i], values[i + 1]) for i in range(len(values) - 1)]
    chunks = [values[i:i + n] for i in range(0, len(values), n)]
    total, running = 0, []
    for v in values:
        total += v
        running.append(total)
    seen, unique = set(), []
    for v in values:
        if v not in seen:
            seen.add(v)
            unique.append(v)
    windows = []
    window = collections.deque(maxlen=n)
    for v in values:
        window.append(v)
        if len(window) == n:
            windows.append(tuple(window))
    return pairs, chunks, running, unique, windows


@dataclasses.dataclass
class Point:
    x: float
    y: float
    tags: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class Segment:
    start: Point
    end: Point
    label: str = "seg"
    meta: dict = dataclasses.field(default_factory=dict)


def dataclass_roundtrip():
    s = Segment(Point(1.0, 2.0, ["a"]), Point(3.5, -1.0), meta={"k": [1, (2, 3)]})
    d = dataclasses.asdict(s)
    t = dataclasses.astuple(s)
    r = dataclasses.replace(s, label="other")
    return d, t, r.label, [f.name for f in dataclasses.fields(s)], s == r


def counter_ops(words):
    c = collections.Counter(words)
    c.update(words[:3])
    c2 = collections.Counter(words[::2])
    return c.most_common(4), sorted((c - c2).items()), sorted((c & c2).items()), c.total()


def ordered_and_named():
    od = collections.OrderedDict()
    for k in "hello world":
        od[k] = od.get(k, 0) + 1
    od.move_to_end("l")
    P = collections.namedtuple("P", "x y z", defaults=(0,))
    p = P(1, 2)
    cm = collections.ChainMap({"a": 1}, {"a": 2, "b": 3})
    return list(od.items()), p._replace(y=5), p._asdict(), dict(cm), P._fields


def random_ops(seed):
    r = random.Random(seed)
    xs = list(range(20))
    r.shuffle(xs)
    return (xs, r.sample(range(100), 7), r.choices("abcdef", weights=[1, 2, 3, 4, 5, 6], k=8),
            r.gauss(0.0, 1.0), r.randrange(10, 1000, 3), r.uniform(-1, 1), r.normalvariate(2, 3),
            r.triangular(0, 10, 3), r.betavariate(2, 3), r.expovariate(1.5), r.choice(xs),
            r.getrandbits(40), r.random())


def deepcopy_nested(obj):
    c = copy.deepcopy(obj)
    return c, c == obj, c is obj, copy.copy(obj) == obj


def _sig_target(a, b=2, *args, c, d=4, **kw):
    return a


def signature_bind(*args, **kwargs):
    sig = inspect.signature(_sig_target)
    ba = sig.bind(*args, **kwargs)
    ba.apply_defaults()
    return str(sig), dict(ba.arguments), ba.args, ba.kwargs


class _Obj:
    def __init__(self, name, inner=None):
        self.name, self.inner = name, inner


def attrgetter_ops():
    objs = [_Obj("b", _Obj("x")), _Obj("a", _Obj("z")), _Obj("c", _Obj("y"))]
    by_inner = sorted(objs, key=operator.attrgetter("inner.name"))
    return ([o.name for o in by_inner], operator.attrgetter("name", "inner.name")(objs[0]),
            operator.itemgetter(1, 0)("ab"), operator.methodcaller("upper")("x"))


def calendar_ops(year, month):
    return (calendar.monthcalendar(year, month), calendar.isleap(year),
            calendar.leapdays(1900, year), calendar.TextCalendar(6).formatmonth(year, month),
            calendar.monthrange(year, month), calendar.weekday(year, month, 13))


def toposort(graph):
    ts = graphlib.TopologicalSorter(graph)
    return list(ts.static_order())


def argparse_run(argv):
    p = argparse.ArgumentParser(prog="prog", add_help=False)
    p.add_argument("files", nargs="*")
    p.add_argument("-v", "--verbose", action="count", default=0)
    p.add_argument("--mode", choices=["fast", "slow"], default="fast")
    p.add_argument("-n", type=int, default=3)
    ns = p.parse_args(argv)
    return vars(ns), p.format_usage()


def configparser_run(text):
    cp = configparser.ConfigParser()
    cp.read_string(text)
    return {s: dict(cp[s]) for s in cp.sections()}, cp.getint("main", "count"), \
        cp.getboolean("main", "flag")


def regex_compile(pattern):
    # the pure-Python regex parser and compiler (re._parser / re._compiler)
    p = re._parser.parse(pattern, 0)
    return re._compiler._code(p, 0)


def shlex_roundtrip(s):
    parts = shlex.split(s)
    return parts, [shlex.quote(p) for p in parts], shlex.join(parts)


def getopt_run(argv):
    return getopt.gnu_getopt(argv, "ab:c", ["long", "value="])


def normal_dist(mu, sigma):
    nd = statistics.NormalDist(mu, sigma)
    return nd.cdf(1.5), nd.inv_cdf(0.3), nd.pdf(0.2), nd.overlap(statistics.NormalDist(1, 2)), \
        nd.quantiles(4), (nd + 2).mean, (nd * 3).stdev


def posix_ops(a, b):
    return (posixpath.normpath(a), posixpath.join(a, b, "c"), posixpath.relpath(a, b),
            posixpath.splitext(a), posixpath.commonpath([a, posixpath.join(a, b)]),
            posixpath.basename(a), posixpath.dirname(a), posixpath.split(a))


def uuid_ops(s):
    u = uuid.UUID(s)
    return str(u), u.hex, u.int, u.version, u.fields, str(uuid.uuid5(uuid.NAMESPACE_DNS, "x.org"))


UNPARSE_SRC = """\
def f(a, /, *b, c=1, **d):
    with open(x) as y, z:
        return [i async for i in q] if a else {k: v for k, v in d.items()}
class C(B, metaclass=M):
    x: int = 3
    @dec
    def m(self): yield from g(); lambda: (yield)
try:
    pass
except* E as e:
    raise X from e
finally:
    del a[1:2], b.c
match p:
    case [1, *rest] | {"k": _} if rest: pass
f'{x!r:>{w}}' + b'\\x00' * -~3 ** 2
"""


def ast_unparse(src):
    return ast.unparse(ast.parse(src))


def pickle_pure(obj):
    # the pure-Python pickler and unpickler (pickle._Pickler / pickle._Unpickler)
    return pickle._loads(pickle._dumps(obj, protocol=4)), pickle._dumps(obj, protocol=2)


def pydecimal_ops():
    D = _pydecimal.Decimal
    with _pydecimal.localcontext() as ctx:
        ctx.prec = 30
        a = D(1) / D(7)
        b = (D("2.5") ** 3).sqrt()
        return (str(a), str(b), str(a.quantize(D("0.001"))), str(D("1.1") + D("2.2")),
                str(D(2).ln()), str(D("-0.0").copy_abs()), D("1e-3") < D("0.01"))


def pydecimal_raises():
    with _pydecimal.localcontext() as ctx:
        ctx.traps[_pydecimal.DivisionByZero] = True
        return _pydecimal.Decimal(1) / _pydecimal.Decimal(0)


class Color(enum.Flag):
    R = 1
    G = 2
    B = 4


def enum_ops():
    E = enum.Enum("E", "A B C")
    return [m.name for m in E], E["B"].value, str(Color.R | Color.B), Color(6), list(Color), \
        Color.G in Color(3)


@functools.singledispatch
def _dispatch(x):
    return "object"


@_dispatch.register
def _(x: int):
    return "int"


@functools.total_ordering
class _Version:
    def __init__(self, v):
        self.v = v

    def __eq__(self, other):
        return self.v == other.v

    def __lt__(self, other):
        return self.v < other.v


def functools_ops():
    @functools.lru_cache(maxsize=None)
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    return (_dispatch(1), _dispatch("s"), _Version(1) >= _Version(2), _Version(3) > _Version(2),
            functools.partial(max, 3)(5), fib(30), sorted([3, 1, 2], key=functools.cmp_to_key(
                lambda a, b: b - a)))


@contextlib.contextmanager
def _managed(log):
    log.append("in")
    try:
        yield 5
    finally:
        log.append("out")


def contextlib_ops():
    log = []
    with _managed(log) as v:
        log.append(v)
    with contextlib.suppress(KeyError):
        {}["x"]
    with contextlib.ExitStack() as stack:
        stack.callback(log.append, "callback")
        log.append(stack.enter_context(_managed(log)))
    try:
        with _managed(log):
            raise ValueError("inside")
    except ValueError as exc:
        log.append(str(exc))
    return log


def csv_sniff(sample):
    sniffer = csv.Sniffer()
    return sniffer.sniff(sample).delimiter, sniffer.has_header(sample)


def email_parse(text):
    m = email.message_from_string(text)
    return m["From"], email.header.decode_header(m["Subject"]), m.get_payload(), \
        m.get_content_type(), m.get_params()


def cookies_parse(header):
    c = http.cookies.SimpleCookie()
    c.load(header)
    return sorted((k, v.value, v["path"]) for k, v in c.items()), c.output()


def plural_forms(expr):
    f = gettext.c2py(expr)
    return [f(n) for n in range(30)]


def html_diff_table(a, b):
    return difflib.HtmlDiff(wrapcolumn=20).make_table(a, b).count("<td")


def type_hints():
    def g(a: int, b: "list[str]" = None) -> typing.Optional[dict]:
        pass
    return (typing.get_type_hints(g), typing.get_origin(typing.List[int]),
            typing.get_args(typing.Dict[str, typing.Union[int, None]]))


def text_wrapper(text):
    w = textwrap.TextWrapper(width=20, max_lines=3, break_on_hyphens=True)
    return w.wrap(text)


def statistics_error():
    return statistics.mean([])


CASES = [
    # textwrap
    pytest.param(textwrap.wrap, (TEXT, 30), {}, id="textwrap.wrap"),
    pytest.param(textwrap.fill, (TEXT,), {"width": 44, "initial_indent": "> ",
                                         "subsequent_indent": "  "}, id="textwrap.fill"),
    pytest.param(textwrap.dedent, (INDENTED,), {}, id="textwrap.dedent"),
    pytest.param(textwrap.shorten, (TEXT, 60), {"placeholder": " [...]"}, id="textwrap.shorten"),
    pytest.param(textwrap.indent, (INDENTED, "| "), {}, id="textwrap.indent"),
    # statistics
    pytest.param(statistics.mean, (DATA,), {}, id="statistics.mean"),
    pytest.param(statistics.mean, ([fractions.Fraction(1, 3), fractions.Fraction(2, 7)],), {},
                 id="statistics.mean-fraction"),
    pytest.param(statistics.median, (DATA,), {}, id="statistics.median"),
    pytest.param(statistics.median_grouped, (DATA,), {}, id="statistics.median_grouped"),
    pytest.param(statistics.stdev, (DATA,), {}, id="statistics.stdev"),
    pytest.param(statistics.pstdev, (DATA,), {}, id="statistics.pstdev"),
    pytest.param(statistics.variance, (DATA,), {}, id="statistics.variance"),
    pytest.param(statistics.quantiles, (DATA,), {"n": 10}, id="statistics.quantiles"),
    pytest.param(statistics.correlation, (XS, YS), {}, id="statistics.correlation"),
    pytest.param(statistics.covariance, (XS, YS), {}, id="statistics.covariance"),
    pytest.param(statistics.linear_regression, (XS, YS), {}, id="statistics.linear_regression"),
    pytest.param(statistics.fmean, (DATA,), {"weights": list(range(1, 12))},
                 id="statistics.fmean"),
    pytest.param(statistics.geometric_mean, (DATA,), {}, id="statistics.geometric_mean"),
    pytest.param(statistics.harmonic_mean, (DATA,), {}, id="statistics.harmonic_mean"),
    pytest.param(statistics.mode, (DATA,), {}, id="statistics.mode"),
    pytest.param(statistics.multimode, ("aabbbcccdde",), {}, id="statistics.multimode"),
    pytest.param(normal_dist, (0.5, 1.25), {}, id="statistics.NormalDist"),
    pytest.param(statistics_error, (), {}, id="statistics.mean-empty-raises"),
    # fractions
    pytest.param(fraction_arith, (3, 7, -5, 11), {}, id="fractions.Fraction"),
    # difflib
    pytest.param(sequence_matcher, ("private Thread currentThread;",
                                    "private volatile Thread currentThread;"), {},
                 id="difflib.SequenceMatcher"),
    pytest.param(unified_diff, (OLD, NEW), {}, id="difflib.unified_diff"),
    pytest.param(ndiff, (OLD, NEW), {}, id="difflib.ndiff"),
    pytest.param(difflib.get_close_matches, ("appel", ["ape", "apple", "peach", "puppy"]), {},
                 id="difflib.get_close_matches"),
    # shlex
    pytest.param(shlex.split, ("cmd --opt='a b' \"c d\" e\\ f # comment",), {"comments": True},
                 id="shlex.split"),
    pytest.param(shlex.quote, ("it's a $test",), {}, id="shlex.quote"),
    pytest.param(shlex_roundtrip, ("ls -la 'my dir' \"x y\" z",), {}, id="shlex.roundtrip"),
    # ast
    pytest.param(ast.literal_eval, ("{'a': [1, 2.5, -3, (4, 5j)], 'b': {1, 2}, 'c': None}",), {},
                 id="ast.literal_eval"),
    pytest.param(ast.literal_eval, ("[1, 2, (3, 4]",), {}, id="ast.literal_eval-raises"),
    # json, pure-Python paths
    pytest.param(json.encoder.py_encode_basestring, ('a "quoted"\n\ttab \u00e9 \\ end',), {},
                 id="json.py_encode_basestring"),
    pytest.param(json.encoder.py_encode_basestring_ascii, ('snow \u2603 \U0001f600 "q"\n',), {},
                 id="json.py_encode_basestring_ascii"),
    pytest.param(json_encode_pure, (NESTED,), {"indent": 2, "sort_keys": True},
                 id="json.iterencode-pure"),
    pytest.param(json.decoder.py_scanstring, ('"abc\\u00e9\\n\\"x\\" \\ud83d\\ude00 tail" rest', 1),
                 {}, id="json.py_scanstring"),
    pytest.param(json_decode_pure, (JSON_TEXT,), {}, id="json.decode-pure-scanner"),
    pytest.param(json_decode_pure, ('{"a": [1, 2,, 3]}',), {}, id="json.decode-pure-raises"),
    # ipaddress
    pytest.param(ip_address_facts, ("192.168.12.34",), {}, id="ipaddress.ip_address-v4"),
    pytest.param(ip_address_facts, ("2001:db8::ff00:42:8329",), {}, id="ipaddress.ip_address-v6"),
    pytest.param(ip_hosts, ("10.1.2.0/28",), {}, id="ipaddress.ip_network-hosts"),
    pytest.param(ip_summarize, ("192.0.2.0", "192.0.2.130"), {},
                 id="ipaddress.summarize_address_range"),
    pytest.param(ip_collapse, (["192.0.2.0/25", "192.0.2.128/25", "10.0.0.0/24", "10.0.1.0/24"],),
                 {}, id="ipaddress.collapse_addresses"),
    pytest.param(ipaddress.ip_address, ("300.1.2.3",), {}, id="ipaddress.ip_address-raises"),
    # calendar
    pytest.param(calendar_ops, (2024, 2), {}, id="calendar"),
    pytest.param(calendar.TextCalendar().formatmonth, (2023, 11), {},
                 id="calendar.TextCalendar.formatmonth-bound"),
    # string
    pytest.param(template_substitute, ("$who likes ${what}, $$5",), {"who": "tim", "what": "pie"},
                 id="string.Template.substitute"),
    pytest.param(template_substitute, ("$who likes $what",), {"who": "tim"},
                 id="string.Template.substitute-raises"),
    pytest.param(formatter_format, ("{0:>8}|{name!r}|{1[0]:.3f}|{x.real}",
                                    "ab", [3.14159]), {"name": "n", "x": 2 + 3j},
                 id="string.Formatter.format"),
    pytest.param(string.capwords, ("hello   big  world",), {}, id="string.capwords"),
    # colorsys
    pytest.param(colors, (0.2, 0.4, 0.4), {}, id="colorsys"),
    # heapq / bisect
    pytest.param(heapq.nsmallest, (4, [5, 1, 8, 3, 9, 2, 7, 4, 6]), {}, id="heapq.nsmallest"),
    pytest.param(heap_merge, ([1, 4, 9], [2, 3, 10, 11], [0, 5]), {}, id="heapq.merge"),
    pytest.param(heap_ops, ([5, 1, 8, 3, 9, 2, 7, 4, 6],), {}, id="heapq.push-pop"),
    pytest.param(bisect_ops, ([5, 1, 8, 3, 9], [0, 3, 4, 10]), {}, id="bisect"),
    # base64
    pytest.param(b64_pure, (b"dcgraph \x00\xff binary!",), {}, id="base64"),
    # urllib.parse
    pytest.param(urlparse_parts, ("https://user:pw@example.com:8080/a/b/c;p?q=1&r=two&q=3#frag",),
                 {}, id="urllib.parse.urlparse"),
    pytest.param(urllib.parse.urlencode, ({"q": "a b&c", "n": [1, 2], "e": "\u00e9"},),
                 {"doseq": True}, id="urllib.parse.urlencode"),
    pytest.param(urllib.parse.quote, ("/path with spaces/\u00fcber?x=1",), {},
                 id="urllib.parse.quote"),
    pytest.param(urllib.parse.unquote, ("%2Fpath%20x%C3%BCber%zz",), {}, id="urllib.parse.unquote"),
    # email / html / fnmatch / posixpath
    pytest.param(email.utils.parseaddr, ("Jane Doe <jane.doe@example.com>",), {},
                 id="email.utils.parseaddr"),
    pytest.param(email.utils.formataddr, (("J\u00e4ne, Doe", "jane@example.com"),), {},
                 id="email.utils.formataddr"),
    pytest.param(html.escape, ("<a href=\"x\">Tom & 'Jerry'</a>",), {}, id="html.escape"),
    pytest.param(html.unescape, ("&lt;p&gt; caf&eacute; &#233; &#x1F600; &amp;amp",), {},
                 id="html.unescape"),
    pytest.param(fnmatch.translate, ("*.py[cod]?x[!a-c]*",), {}, id="fnmatch.translate"),
    pytest.param(fnmatch.filter, (["a.py", "b.pyc", "c.txt", "d.pyo"], "*.py?"), {},
                 id="fnmatch.filter"),
    pytest.param(posix_ops, ("/usr/local/../lib/./python3/x.tar.gz", "/usr/share"), {},
                 id="posixpath"),
    # functools / itertools recipes / operator
    pytest.param(reduce_lambda, (list(range(1, 30)),), {}, id="functools.reduce-lambda"),
    pytest.param(itertools_recipes, ([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5], 3), {},
                 id="itertools-recipes"),
    pytest.param(attrgetter_ops, (), {}, id="operator.attrgetter"),
    # dataclasses / pprint / collections / copy / inspect
    pytest.param(dataclass_roundtrip, (), {}, id="dataclasses.asdict"),
    pytest.param(pprint.pformat, (NESTED,), {"width": 30}, id="pprint.pformat"),
    pytest.param(counter_ops, ("the cat and the hat and the bat sat".split(),), {},
                 id="collections.Counter"),
    pytest.param(ordered_and_named, (), {}, id="collections.OrderedDict-namedtuple"),
    pytest.param(deepcopy_nested, (NESTED,), {}, id="copy.deepcopy"),
    pytest.param(signature_bind, (1, 2, 3, 4), {"c": 5, "e": 6}, id="inspect.signature.bind"),
    # random, reseeded identically
    pytest.param(random_ops, (12345,), {}, id="random.Random"),
    # larger pure-Python modules
    pytest.param(toposort, ({"d": {"b", "c"}, "b": {"a"}, "c": {"a"}, "e": {"d"}},), {},
                 id="graphlib.TopologicalSorter"),
    pytest.param(argparse_run, (["-vv", "--mode", "slow", "-n", "7", "a.txt", "b.txt"],), {},
                 id="argparse.parse_args"),
    pytest.param(configparser_run, ("[main]\ncount = 12\nflag = yes\nname = %(x)s!\nx = y\n"
                                    "[other]\nk: v\n",), {}, id="configparser"),
    pytest.param(tomllib.loads, ('title = "t"\n[owner]\nname = "x"\ndob = 1979-05-27T07:32:00Z\n'
                                 '[db]\nports = [8000, 8001]\nenabled = true\n'
                                 'temp = { cpu = 79.5, case = 72.0 }\n',), {},
                 id="tomllib.loads"),
    pytest.param(regex_compile, (r"(?P<y>\d{4})-(\d\d)?[a-z]+|x*?(?=foo)\b\w{2,5}",), {},
                 id="re._parser-compiler"),
    pytest.param(getopt_run, (["-a", "file", "-bval", "--long", "--value=3", "x"],), {},
                 id="getopt.gnu_getopt"),
    pytest.param(reprlib.repr, (list(range(100)),), {}, id="reprlib.repr"),
    pytest.param(ast_unparse, (UNPARSE_SRC,), {}, id="ast.unparse"),
    pytest.param(pickle_pure, ({"a": [1, 2.5, (3, "x")], "b": {1, 2}, "c": b"by", "d": None,
                                "e": frozenset([1]), "f": 10 ** 30},), {}, id="pickle-pure"),
    pytest.param(pydecimal_ops, (), {}, id="_pydecimal"),
    pytest.param(pydecimal_raises, (), {}, id="_pydecimal-raises"),
    pytest.param(enum_ops, (), {}, id="enum"),
    pytest.param(functools_ops, (), {}, id="functools.singledispatch-total_ordering"),
    pytest.param(contextlib_ops, (), {}, id="contextlib"),
    pytest.param(csv_sniff, ("a;b;c\n1;2;3\n4;5;6\n",), {}, id="csv.Sniffer"),
    pytest.param(email_parse, ("From: a@b.c\nSubject: =?utf-8?q?h=C3=A9llo?=\n"
                               "Content-Type: text/plain; charset=utf-8\n\nbody text\n",), {},
                 id="email.message_from_string"),
    pytest.param(cookies_parse, ('a=1; b="x y"; Path=/; HttpOnly',), {}, id="http.cookies"),
    pytest.param(plural_forms, ("n%10==1 && n%100!=11 ? 0 : n != 0 ? 1 : 2",), {},
                 id="gettext.c2py"),
    pytest.param(html_diff_table, (OLD, NEW), {}, id="difflib.HtmlDiff"),
    pytest.param(type_hints, (), {}, id="typing.get_type_hints"),
    pytest.param(mimetypes.guess_type, ("a/b.tar.gz",), {}, id="mimetypes.guess_type"),
    pytest.param(text_wrapper, ("a-very-long-hyphenated-word and more words follow " * 3,), {},
                 id="textwrap.TextWrapper-max_lines"),
    pytest.param(uuid_ops, ("{12345678-1234-5678-1234-567812345678}",), {}, id="uuid.UUID"),
]


def _outcome(fn, args, kwargs):
    try:
        return ("value", fn(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - compared by type and message
        return ("raised", type(exc), str(exc))


def _traced_outcome(fn, args, kwargs):
    try:
        result, tape = dcgraph.track(fn, *args, **kwargs)
    except Exception as exc:  # noqa: BLE001
        assert hasattr(exc, "tape"), f"{type(exc).__name__} propagated without a tape: {exc}"
        return ("raised", type(exc), str(exc)), exc.tape, exc
    return ("value", result), tape, result


def _root_function(fn):
    return fn.__func__ if isinstance(fn, types.MethodType) else fn


@pytest.mark.parametrize("fn,args,kwargs", CASES)
def test_traced_equals_untraced(fn, args, kwargs):
    root = _root_function(fn)
    code_before = root.__code__
    assert instrument(code_before).error is None, instrument(code_before).error
    expected = _outcome(fn, args, kwargs)
    for run in range(RUNS):
        got, tape, value = _traced_outcome(fn, args, kwargs)
        assert got == expected, f"traced run {run}: {got!r} != untraced {expected!r}"
    # the tape of the last run: it builds, lints, and ends in the outcome
    tape.lint()
    assert len(list(tape.walk())) > 0
    end = tape.nodes[-1]
    if expected[0] == "value":
        assert isinstance(end, Return) and end.value is value
        assert tape.result is value and not tape.raised
    else:
        assert isinstance(end, Raise) and end.value is value
        assert tape.raised
    # instrumented code never leaks into the original function
    assert root.__code__ is code_before
    assert _outcome(fn, args, kwargs) == expected


def _python_function(fn):
    fn = fn.__func__ if isinstance(fn, types.MethodType) else fn
    return fn if isinstance(fn, types.FunctionType) else None


@pytest.mark.parametrize("fn,args,kwargs", CASES)
def test_python_callees_are_traced(fn, args, kwargs):
    """Every Python function the run called is traced into, unless it cannot be (generators,
    unsupported opcodes); a rewrite that the bytecode library refuses is a bug, not a reason."""
    _, tape, _ = _traced_outcome(fn, args, kwargs)
    ctx = dcgraph.Context()
    failures = set()
    nested = 0
    for node in tape.walk():
        if isinstance(node, NestedCall):
            nested += 1
            continue
        if node.kind != "PrimitiveCall":
            continue
        f = _python_function(node.fn)
        if f is None or ctx.is_primitive(f, 1):
            continue
        err = instrument(f.__code__).error
        if err is not None and err.startswith("instrumentation failed"):
            failures.add(f"{f.__module__}.{f.__qualname__}: {err}")
    assert not failures, "\n".join(sorted(failures))
    assert tape.nodes  # built
    assert str(tape)   # and printable


@pytest.mark.parametrize("depth", [0, 2])
@pytest.mark.parametrize("fn,args,kwargs", CASES)
def test_depth_limited_tracing_matches(fn, args, kwargs, depth):
    """With calls below ``depth`` recorded as primitives, the outcome is unchanged and the
    (shallower) tape still lints."""
    expected = _outcome(fn, args, kwargs)
    ctx = dcgraph.DepthLimitContext(depth)
    for _ in range(10):
        try:
            got, tape = ("value", dcgraph.track(fn, *args, ctx=ctx, **kwargs)[0]), None
        except Exception as exc:  # noqa: BLE001
            got = ("raised", type(exc), str(exc))
        assert got == expected
    try:
        _, tape = dcgraph.track(fn, *args, ctx=ctx, **kwargs)
    except Exception as exc:  # noqa: BLE001
        tape = exc.tape
    tape.lint()
    assert max(t.depth for t in _tapes(tape)) <= depth


def _tapes(tape):
    yield tape
    for node in tape.walk():
        if isinstance(node, NestedCall) and node.child is not None:
            yield node.child


def test_random_reseeded_matches_module_level():
    """random's module-level functions share global state: seed identically before each side."""
    def draw():
        return [random.random(), random.randint(1, 6), random.choice("xyz"), random.gauss(0, 1)]

    random.seed(99)
    expected = draw()
    for _ in range(RUNS):
        random.seed(99)
        assert dcgraph.track(draw)[0] == expected
    random.seed(99)
    _, tape = dcgraph.track(draw)
    tape.lint()
    random.seed(99)
    assert draw() == expected


def test_json_pure_encoder_without_c_make_encoder(monkeypatch):
    """``encode`` (one-shot) with the C encoder disabled: the pure-Python ``_make_iterencode`` and
    ``py_encode_basestring_ascii`` run for everything."""
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    monkeypatch.setattr(json.encoder, "encode_basestring_ascii",
                        json.encoder.py_encode_basestring_ascii)
    monkeypatch.setattr(json.encoder, "encode_basestring", json.encoder.py_encode_basestring)
    monkeypatch.setattr(json.decoder, "scanstring", json.decoder.py_scanstring)

    def roundtrip(obj):
        text = json.JSONEncoder(sort_keys=True).encode(obj)
        return text, json_decode_pure(text), json.encoder.py_encode_basestring_ascii("\u00e9\n")

    expected = roundtrip(NESTED)
    for _ in range(RUNS):
        assert dcgraph.track(roundtrip, NESTED)[0] == expected
    _, tape = dcgraph.track(roundtrip, NESTED)
    tape.lint()
    assert len(list(tape.walk())) > 0
    assert roundtrip(NESTED) == expected


def test_print_tape_of_stdlib_call():
    """Printing a tape builds and renders every node of a deeply nested stdlib run."""
    result, tape = dcgraph.track(textwrap.shorten, TEXT, 50)
    text = str(tape)
    assert text and repr(result)[:20] in text
