"""Attribute reads: instance fields carry gradients; a property is differentiated through its
getter; other computed attributes (``__getattr__``, descriptors) are an error, never a silent
zero."""
import dataclasses

import pytest

from dcgraph import ad


class WithProperty:
    def __init__(self):
        self.x = 0.0

    @property
    def doubled(self):
        return self.x * 2.0


@dataclasses.dataclass
class Point:
    x: float = 0.0            # a class-level default: the instance field shadows it
    y: float = 1.0


def through_property(a):
    h = WithProperty()
    h.x = a
    return h.doubled


def through_fields(a):
    p = Point()
    p.x = a * 3.0
    p.y = a
    return p.x * p.y


def test_property_read_goes_through_its_getter():
    assert ad.grad(through_property)(1.5) == pytest.approx(2.0)


class WithDescriptor:
    """A computed attribute that is not a property: still refused, never a zero."""

    def __init__(self):
        self.x = 0.0

    def __getattr__(self, name):
        return self.x * 2.0


def through_getattr(a):
    h = WithDescriptor()
    h.x = a
    return h.doubled


def test_other_computed_attributes_are_an_error_not_a_zero():
    with pytest.raises(ad.MissingRuleError, match="computed by its type"):
        ad.grad(through_getattr)(1.5)


def test_fields_with_class_defaults_differentiate():
    assert ad.grad(through_fields)(1.5) == pytest.approx(6 * 1.5)
