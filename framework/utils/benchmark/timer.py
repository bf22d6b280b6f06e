"""``Timer``: ``timeit.Timer`` made aware of the framework: warmup, a fixed thread count,
the cuda device synchronized around each timed block, and blocked/adaptive replicates
(PyTorch's ``torch.utils.benchmark.utils.timer``)."""
import enum
import textwrap
import timeit

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The time in seconds, after waiting for the cuda device when there is one (the
    default clock of ``Timer``: kernels launched by the timed block are counted)."""
    import framework
    if framework.cuda.is_available():
        framework.cuda.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Helper class for measuring execution time of framework statements.

    Based on ``timeit.Timer`` (and using it), with: warmup before measuring, the thread
    pool set to ``num_threads`` while timing (and restored after), the cuda device
    synchronized by the default ``timer``, replicates (``blocked_autorange``,
    ``adaptive_autorange``) summarized by a ``Measurement``, and optional metadata
    (``label``, ``sub_label``, ``description``, ``env``) that ``Compare`` groups by.

    ``stmt`` and ``setup`` are code strings; ``globals`` defines the variables they use,
    and ``torch`` names the framework there unless ``globals`` says otherwise. Only
    Python statements are supported (``language="python"``).
    """

    _timer_cls = timeit.Timer

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        import framework
        self._globals = dict(globals or {})
        if language in (Language.PYTHON, "py", "python"):
            self._globals.setdefault("torch", framework)
            self._language = Language.PYTHON
            if global_setup:
                raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most "
                                 "likely this code can simply be moved to `setup`.")
        elif language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("framework.utils.benchmark.Timer: C++ statements "
                                      "(language='cpp') are not supported; time Python "
                                      "statements")
        else:
            raise ValueError(f"Invalid language `{language}`.")
        stmt = textwrap.dedent(stmt)
        stmt = (stmt[1:] if stmt and stmt[0] == "\n" else stmt).rstrip()
        setup = textwrap.dedent(setup)
        setup = (setup[1:] if setup and setup[0] == "\n" else setup).rstrip()
        self._timer = self._timer_cls(stmt=stmt, setup=setup, timer=timer,
                                      globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # a zero time would break the statistics (and the block size estimate)
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """Mirrors the semantics of ``timeit.Timer.timeit()``: executes ``stmt``
        ``number`` times (after a warmup of ``max(number // 100, 2)`` runs)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _threaded_measurement_loop(self, number, time_hook, stop_hook, min_run_time,
                                   max_run_time=None, callback=None):
        total_time = 0.0
        can_stop = False
        times = []
        with common.set_torch_threads(self._task_spec.num_threads):
            while total_time < min_run_time or not can_stop:
                spent = time_hook()
                times.append(spent)
                total_time += spent
                if callback:
                    callback(number, spent)
                can_stop = stop_hook(times)
                if max_run_time and total_time > max_run_time:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """The smallest power of ten of runs whose time makes the timer's overhead under
        0.01% (and is at least ``min_run_time / 1000``), or exceeds ``min_run_time``."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            overhead = overheads[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Measure many replicates while keeping timer overhead to a minimum.

        Runs ``setup``, picks a block size (runs per replicate) large enough to amortize
        the timer's cost (``_estimate_block_size``), then times blocks until their total
        reaches ``min_run_time`` seconds. ``callback(number, time)`` sees each block.
        Returns a ``Measurement``.
        """
        number = self._estimate_block_size(min_run_time)
        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), lambda times: True,
            min_run_time=min_run_time, callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """As ``blocked_autorange``, but keeps measuring until the IQR / median of the
        replicates is under ``threshold`` (with more than 3 replicates and
        ``min_run_time`` spent) or ``max_run_time`` seconds have been spent."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop_hook(times):
            if len(times) > 3:
                return common.Measurement(number_per_run=number, raw_times=times,
                                          task_spec=self._task_spec
                                          ).meets_confidence(threshold=threshold)
            return False
        times = self._threaded_measurement_loop(
            number, lambda: self._timeit(number), stop_hook, min_run_time, max_run_time,
            callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def collect_callgrind(self, number=100, *, repeats=None, collect_baseline=True,
                          retain_out_file=False):
        """Instruction counts under Callgrind: not supported here (PyTorch needs its own
        valgrind bindings compiled into the library)."""
        if repeats is not None and repeats < 1:
            raise ValueError("If specified, `repeats` must be >= 1")
        raise OSError("Valgrind is not supported on this platform.")
