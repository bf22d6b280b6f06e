"""``framework.autograd.profiler``: PyTorch's older profiler interface, over
framework.profiler (``profile(use_cuda=...)``, ``record_function``)."""
from ..profiler import (EventList, FunctionEvent, FunctionEventAvg, ProfilerActivity,  # noqa: F401
                        record_function)
from ..profiler import profile as _profile

__all__ = ["profile", "record_function", "EventList", "FunctionEvent", "FunctionEventAvg"]


class profile(_profile):
    """``with profile(use_device="cuda", record_shapes=True) as prof:`` records the block;
    ``prof.key_averages().table()``, ``prof.table()``, ``prof.function_events``,
    ``prof.export_chrome_trace(path)``. ``enabled=False`` records nothing."""

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True):
        if use_device not in (None, "cuda"):
            raise ValueError(f"profile(): use_device must be None or 'cuda', got {use_device!r}")
        activities = {ProfilerActivity.CPU} if use_cpu else set()
        if use_cuda or use_device == "cuda":
            activities.add(ProfilerActivity.CUDA)
        super().__init__(activities=activities, record_shapes=record_shapes,
                         profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules)
        self.enabled = enabled

    def start(self):
        if self.enabled:
            super().start()

    def stop(self):
        if self.enabled:
            super().stop()

    @property
    def function_events(self):
        return self.events()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """The events as a table, as ``self.function_events.table(...)``."""
        return self.events().table(sort_by, row_limit, max_src_column_width,
                                   max_name_column_width, max_shapes_column_width, header,
                                   top_level_events_only)

    @property
    def self_cpu_time_total(self):
        return self.events().self_cpu_time_total

    def __str__(self):
        return self.table()
