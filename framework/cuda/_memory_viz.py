"""HTML views of a memory snapshot (framework.cuda.memory._snapshot()): the page loads
PyTorch's MemoryViz.js, the viewer of pytorch.org/memory_viz, with the snapshot's pickle
embedded."""
import base64
import json
import pickle
import warnings

_VIEWER = "https://cdn.jsdelivr.net/gh/pytorch/pytorch@main/torch/utils/viz/MemoryViz.js"

_PAGE = """
<!DOCTYPE html>
<html>
<head>
</head>
<body>
<script type="module">
import {add_local_files} from "%s"
const local_files = $SNAPSHOT
add_local_files(local_files, $VIZ_KIND)
</script>
</body>
""" % _VIEWER


def _format_viz(data, viz_kind, device):
    if device is not None:
        warnings.warn("device argument is deprecated, plots now contain all device",
                      FutureWarning, stacklevel=3)
    buf = pickle.dumps(data)
    buf += b"\x00" * (3 - len(buf) % 3)   # the viewer decodes whole base64 groups
    files = json.dumps([{"name": "snapshot.pickle",
                         "base64": base64.b64encode(buf).decode("utf-8")}])
    return _PAGE.replace("$VIZ_KIND", repr(viz_kind)).replace("$SNAPSHOT", files)


def _drop_freed(data):
    """The snapshot without the entries of allocations freed within the trace."""
    data = dict(data)
    traces = []
    for entries in data["device_traces"]:
        drop, live, requested = set(), {}, set()
        for i, e in enumerate(entries):
            if e["action"] == "alloc":
                live[e["addr"]] = i
            elif e["action"] == "free_requested":
                requested.add(e["addr"])
                if e["addr"] in live:
                    drop.update((i, live.pop(e["addr"])))
            elif e["action"] == "free_completed" and e["addr"] in requested:
                requested.discard(e["addr"])
                drop.add(i)
        traces.append([e for i, e in enumerate(entries) if i not in drop])
    data["device_traces"] = traces
    return data


def trace_plot(data, device=None, plot_segments=False, filter_freed=False):
    """HTML of the memory in use over the recorded trace of ``data`` (a snapshot);
    ``plot_segments`` plots the cached segments instead of the allocations,
    ``filter_freed`` only the allocations still live at its end."""
    if filter_freed:
        data = _drop_freed(data)
    return _format_viz(data, "Active Cached Memory Timeline" if plot_segments
                       else "Active Memory Timeline", device)


def segment_plot(data, device=None):
    """HTML of the allocator's segments and their blocks over the recorded trace."""
    return _format_viz(data, "Allocator State History", device)
