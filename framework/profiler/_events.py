"""The results of a profile: events (``FunctionEvent``), their averages by name
(``FunctionEventAvg``), the list of either (``EventList``) with PyTorch's ``table()``, and the
Chrome trace. Times are in microseconds, as PyTorch's."""
import enum
import json
import os


class DeviceType(enum.Enum):
    """Where an event ran (``torch.autograd.DeviceType``'s members that apply here)."""
    CPU = 0
    CUDA = 1


class Interval:
    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start


class _Times:
    """The time attributes common to events and their averages, under PyTorch's names
    (``cuda_*`` are the older names of ``device_*``)."""

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return self.device_time_total / self.count if self.count else 0.0

    cuda_time = device_time

    @property
    def cuda_time_total(self):
        return self.device_time_total

    @property
    def cuda_memory_usage(self):
        return self.device_memory_usage

    @property
    def self_cuda_memory_usage(self):
        return self.self_device_memory_usage

    @property
    def self_cuda_time_total(self):
        return self.self_device_time_total


class FunctionEvent(_Times):
    """One recorded range (an op call, a ``record_function`` block, a backward node, a
    kernel launch on the host) or one kernel (``device_type`` CUDA)."""

    def __init__(self, id, name, thread, start_us, end_us, device_type=DeviceType.CPU,
                 input_shapes=None, is_user_annotation=False, device_index=0, stream=None,
                 category="cpu_op"):
        self.id, self.name, self.thread = id, name, thread
        self.time_range = Interval(start_us, end_us)
        self.device_type, self.device_index, self.stream = device_type, device_index, stream
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.is_user_annotation = is_user_annotation
        self.category = category
        self.cpu_parent = None
        self.cpu_children = []
        self.kernels = []      # the kernels this range launched itself
        self.count = 1
        self.device_time_total = self.self_device_time_total = 0.0
        # bytes allocated inside the range (``profile_memory``), children included or not
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        if self.device_type is not DeviceType.CPU:
            return 0.0
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        if self.device_type is not DeviceType.CPU:
            return 0.0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type.name}"
                f" cpu_time={_fmt(self.cpu_time_total)} start_us={self.time_range.start:.3f} "
                f"end_us={self.time_range.end:.3f} cpu_children={[c.id for c in self.cpu_children]}"
                f" cuda_time={_fmt(self.device_time_total)} thread={self.thread} "
                f"input_shapes={self.input_shapes}>")


class FunctionEventAvg(_Times):
    """The events of one name (and input shapes, when grouped so) summed: ``count`` calls,
    ``*_total`` times summed, ``cpu_time``/``cuda_time`` per call."""

    def __init__(self, key="", input_shapes=None):
        self.key, self.input_shapes = key, input_shapes
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.device_time_total = self.self_device_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.device_memory_usage = self.self_device_memory_usage = 0
        self.device_type = DeviceType.CPU
        self.is_user_annotation = False
        self.cpu_parent = None

    def add(self, other):
        """Adds an event (or another average) into this one; returns self."""
        if self.count == 0:
            self.device_type = other.device_type
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = getattr(other, "cpu_parent", None)
            if self.input_shapes is None:
                self.input_shapes = other.input_shapes
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        return self

    __iadd__ = add

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={_fmt(self.self_cpu_time_total)}"
                f" cpu_time={_fmt(self.cpu_time)} self_cuda_time="
                f"{_fmt(self.self_device_time_total)} cuda_time={_fmt(self.device_time)} "
                f"input_shapes={self.input_shapes}>")


# ---- building the events from what was recorded ------------------------------------------

def build(raw, kernels, t_start):
    """FunctionEvents (sorted by start) from the Recorder's ranges and kernels."""
    threads, by_raw, events = {}, {}, []
    for i, r in enumerate(raw):
        tid = threads.setdefault(r.tid, len(threads) + 1)
        ev = FunctionEvent(i + 1, r.name, tid, (r.t0 - t_start) / 1e3, (r.t1 - t_start) / 1e3,
                           input_shapes=r.shapes, is_user_annotation=r.cat == "user_annotation",
                           category=r.cat)
        ev.self_cpu_memory_usage, ev.self_device_memory_usage = r.mem, r.dmem
        by_raw[id(r)] = ev
        events.append(ev)
    for r, ev in zip(raw, events):
        if r.parent is not None and id(r.parent) in by_raw:
            ev.cpu_parent = parent = by_raw[id(r.parent)]
            parent.cpu_children.append(ev)
    n = len(events)
    for j, k in enumerate(kernels):
        ev = FunctionEvent(n + j + 1, k.name, 0, k.t0_us, k.t0_us + k.dur_us,
                           device_type=DeviceType.CUDA, device_index=k.device, stream=k.stream,
                           category="kernel")
        ev.device_time_total = ev.self_device_time_total = k.dur_us
        ev.launch = by_raw.get(id(k.launch))
        owner = by_raw.get(id(k.parent))
        ev.cpu_parent = owner
        if owner is not None:
            owner.kernels.append(ev)
            owner.self_device_time_total += k.dur_us
        events.append(ev)
    # a range's device time is its own kernels' and its children's: children were
    # recorded after their parents, so one pass from the end adds them up
    for ev in reversed(events[:n]):
        ev.device_time_total += ev.self_device_time_total
        ev.cpu_memory_usage += ev.self_cpu_memory_usage
        ev.device_memory_usage += ev.self_device_memory_usage
        if ev.cpu_parent is not None:
            ev.cpu_parent.device_time_total += ev.device_time_total
            ev.cpu_parent.cpu_memory_usage += ev.cpu_memory_usage
            ev.cpu_parent.device_memory_usage += ev.device_memory_usage
        if ev.is_user_annotation:   # PyTorch counts memory for ops only
            ev.cpu_memory_usage = ev.self_cpu_memory_usage = 0
            ev.device_memory_usage = ev.self_device_memory_usage = 0
    events.sort(key=lambda e: (e.time_range.start, e.id))
    return events


# ---- the table ------------------------------------------------------------------------

_SORT_KEYS = ("cpu_time", "cuda_time", "device_time", "cpu_time_total", "cuda_time_total",
              "device_time_total", "self_cpu_time_total", "self_cuda_time_total",
              "self_device_time_total", "count", "cpu_memory_usage", "self_cpu_memory_usage",
              "device_memory_usage", "self_device_memory_usage", "cuda_memory_usage",
              "self_cuda_memory_usage")


def _fmt(us):
    """PyTorch's time format: us below a millisecond, ms below a second, then s."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _fmt_mem(nbytes):
    """PyTorch's memory format: B, then KB, MB, GB (powers of 1024) with two decimals."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _pct(part, whole):
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def table(events, sort_by=None, row_limit=100, max_name_column_width=55,
          max_shapes_column_width=80, header=None, top_level_events_only=False,
          with_cuda=None, shapes=False, profile_memory=False):
    if sort_by is not None:
        if sort_by not in _SORT_KEYS:
            raise ValueError(f"table(): unknown sort_by {sort_by!r}; valid keys: "
                             + ", ".join(_SORT_KEYS))
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    else:
        events = list(events)
    # the totals the percentages are of: every event's self time (kernels for the device)
    self_cpu = sum(e.self_cpu_time_total for e in events)
    self_dev = sum(e.self_device_time_total for e in events if e.device_type is DeviceType.CUDA)
    if with_cuda is None:
        with_cuda = any(e.device_time_total > 0 for e in events)
    if top_level_events_only:
        events = [e for e in events if getattr(e, "cpu_parent", None) is None]
    if row_limit is not None and row_limit > 0:
        events = events[:row_limit]
    name_w = max([len(e.key) for e in events] + [4]) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    cols = ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if with_cuda:
        cols += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    cuda_mem = with_cuda and any(e.self_device_memory_usage > 0 for e in events)
    if profile_memory:
        cols += ["CPU Mem", "Self CPU Mem"] + (["CUDA Mem", "Self CUDA Mem"] if cuda_mem else [])
    cols.append("# of Calls")
    widths = [name_w] + [12] * len(cols)
    if shapes:
        shape_w = min(max([len(str(e.input_shapes)) for e in events] + [12]) + 4,
                      max_shapes_column_width)
        cols.append("Input Shapes")
        widths.append(shape_w)
    rule = "".join("-" * w + "  " for w in widths)

    def line(cells, clip=True):
        # names are clipped to their column; a header wider than its column pushes on
        return "".join(f"{_clip(c, w) if clip and i == 0 else c:>{w}}  "
                       for i, (c, w) in enumerate(zip(cells, widths)))

    out = []
    if header is not None:
        out += ["=" * len(rule), header]
    out += [rule, line(["Name"] + cols, clip=False), rule]
    for e in events:
        row = [e.key, _pct(e.self_cpu_time_total, self_cpu), _fmt(e.self_cpu_time_total),
               _pct(e.cpu_time_total, self_cpu), _fmt(e.cpu_time_total), _fmt(e.cpu_time)]
        if with_cuda:
            row += [_fmt(e.self_device_time_total), _pct(e.self_device_time_total, self_dev),
                    _fmt(e.device_time_total), _fmt(e.device_time)]
        if profile_memory:
            row += [_fmt_mem(e.cpu_memory_usage), _fmt_mem(e.self_cpu_memory_usage)]
            if cuda_mem:
                row += [_fmt_mem(e.device_memory_usage), _fmt_mem(e.self_device_memory_usage)]
        row.append(str(e.count))
        if shapes:
            row.append(str(e.input_shapes))
        out.append(line(row))
    out += [rule, f"Self CPU time total: {_fmt(self_cpu)}"]
    if with_cuda:
        out.append(f"Self CUDA time total: {_fmt(self_dev)}")
    return "\n".join(out) + "\n"


class EventList(list):
    """A list of events (or of averages) with PyTorch's ``EventList`` methods."""

    def __init__(self, *args, use_device=None, profile_memory=False):
        super().__init__(*args)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._by_shape = False

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The events averaged by name (and by input shapes when ``group_by_input_shape``,
        which needs ``record_shapes=True``), in order of first appearance."""
        groups = {}
        for e in self:
            key = (e.key, str(e.input_shapes)) if group_by_input_shape else e.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(
                    e.key, e.input_shapes if group_by_input_shape else None)
            avg.add(e)
        out = EventList(groups.values(), use_device=self._use_device,
                        profile_memory=self._profile_memory)
        out._by_shape = group_by_input_shape
        return out

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as PyTorch's profiler table: sorted by ``sort_by`` (largest first),
        ``row_limit`` rows, CUDA columns where the profile timed kernels."""
        return table(self, sort_by, row_limit, max_name_column_width, max_shapes_column_width,
                     header, top_level_events_only,
                     with_cuda=True if self._use_device else None, shapes=self._by_shape,
                     profile_memory=self._profile_memory)

    def total_average(self):
        total = FunctionEventAvg("Total")
        for e in self:
            total.add(e)
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def export_chrome_trace(self, path):
        export_chrome_trace(self, path)

    def __str__(self):
        return self.table()


# ---- Chrome trace -----------------------------------------------------------------------

_DEFAULT_STREAM_ROW = 7   # the row Kineto gives the default stream


def export_chrome_trace(events, path):
    """Writes the events as a Chrome trace (chrome://tracing, Perfetto): host ranges on
    their thread's row of this process, kernels on a ``stream N`` row of a ``cuda:D``
    process, and an arrow from each launch to its kernel."""
    pid = os.getpid()
    trace, rows, flows = [], {}, 0
    streams = {}
    devs = {e.device_index for e in events if e.device_type is DeviceType.CUDA}
    # a device's process is its index, as Kineto writes it, unless that is this process's id
    base = 0 if pid not in devs else max(devs) + pid + 1

    def stream_row(ev):
        key = (ev.device_index, ev.stream)
        if key not in streams:
            used = {r for (d, _), r in streams.items() if d == ev.device_index}
            row = _DEFAULT_STREAM_ROW if not ev.stream else max(used | {_DEFAULT_STREAM_ROW}) + 1
            streams[key] = row
        return streams[key]

    for ev in events:
        item = {"ph": "X", "cat": ev.category, "name": ev.name, "ts": ev.time_range.start,
                "dur": ev.time_range.elapsed_us()}
        if ev.device_type is DeviceType.CPU:
            item.update(pid=pid, tid=ev.thread, args={"External id": ev.id})
            if ev.input_shapes:
                item["args"]["Input Dims"] = ev.input_shapes
            rows[(pid, ev.thread)] = f"thread {ev.thread} (python)"
        else:
            row = stream_row(ev)
            dev_pid = base + ev.device_index
            item.update(pid=dev_pid, tid=row,
                        args={"device": ev.device_index, "stream": row,
                              "External id": ev.cpu_parent.id if ev.cpu_parent else 0})
            rows[(dev_pid, row)] = f"stream {row}"
            launch = getattr(ev, "launch", None)
            if launch is not None:   # the launch's arrow to its kernel
                flows += 1
                item["args"]["correlation"] = flows
                trace.append({"ph": "s", "id": flows, "pid": pid, "tid": launch.thread,
                              "ts": launch.time_range.start, "cat": "ac2g", "name": "ac2g"})
                trace.append({"ph": "f", "id": flows, "pid": dev_pid, "tid": row,
                              "ts": ev.time_range.start, "cat": "ac2g", "name": "ac2g",
                              "bp": "e"})
        trace.append(item)
    meta = [{"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
             "args": {"name": f"python {pid}"}}]
    for dev in sorted({d for d, _ in streams}):
        meta.append({"ph": "M", "name": "process_name", "pid": base + dev, "tid": 0,
                     "args": {"name": f"cuda:{dev}"}})
    for (p, tid), name in rows.items():
        meta.append({"ph": "M", "name": "thread_name", "pid": p, "tid": tid,
                     "args": {"name": name}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": meta + trace},
                  f)

