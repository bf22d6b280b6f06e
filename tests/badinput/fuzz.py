"""Generated cases for the fuzz test: a JSON spec turned into a Case, so the same spec runs on
torch in-process and on the framework in a worker process."""
from badinput import OK, Case

STORAGE = 12   # the as_strided cases view a 12-element storage


def _as_strided(spec):
    size, stride, offset = spec["size"], spec["stride"], spec["offset"]

    def fn(m, dev):
        v = m.arange(float(STORAGE), device=dev).as_strided(size, stride, offset)
        return [v.clone(), v.sum()]
    return fn


def _index(spec):
    op, dim, index, shape = spec["op"], spec["dim"], spec["index"], spec["shape"]

    def idx(m, dev):
        return m.tensor(index, dtype=m.int64, device=dev).reshape(shape)

    if op == "index_select":
        return lambda m, dev: m.arange(12., device=dev).reshape(3, 4).index_select(dim, idx(m, dev))
    if op == "gather":
        return lambda m, dev: m.arange(12., device=dev).reshape(3, 4).gather(dim, idx(m, dev))
    if op == "take":
        return lambda m, dev: m.take(m.arange(12., device=dev).reshape(3, 4), idx(m, dev))
    if op == "scatter_":
        return lambda m, dev, t: t.scatter_(dim, idx(m, dev), m.ones(shape, device=dev) * 100)
    raise ValueError(op)


def make_case(spec):
    """The Case a fuzz spec describes; its expectation is whatever torch does."""
    if spec["op"] == "as_strided":
        return Case("fuzz.as_strided", _as_strided(spec), OK)
    target = (lambda m, dev: m.arange(12., device=dev).reshape(3, 4)) if spec["op"] == "scatter_" else None
    return Case(f"fuzz.{spec['op']}", _index(spec), OK, target=target)
