"""Recurrent layers: ``RNN``, ``LSTM``, ``GRU`` and their single-step cells.

The recurrences are composites of framework ops. Every layer first projects its whole
input sequence with one GEMM (``x @ W_ih^T + b``), then loops over time with one GEMM per
step for the hidden state. Padded input is handled as a packed sequence whose batch size
is the same at every step, so one loop serves both: at step t the first
``batch_sizes[t]`` rows of the hidden state advance and the rest are already final.
"""
import functools
import math
import numbers
import warnings

import framework
from framework._ops import autocast as _autocast
from framework.autograd.function import Function
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _packed_sequence_type():
    from ..utils.rnn import PackedSequence
    return PackedSequence


class _Split(Function):
    """``x.split(sizes, dim)`` whose backward is one ``cat`` (the generic view backward
    scatters each piece's gradient into a full-size buffer, which costs O(pieces * numel)
    for the per-time-step pieces of a sequence)."""

    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        return tuple(x.split(list(sizes), dim))

    @staticmethod
    def backward(ctx, *grads):
        return framework.cat(list(grads), ctx.dim), None, None


def _split(x, sizes, dim=0):
    return _Split.apply(x, tuple(sizes), dim)


# -- one time step of each cell; ``xp`` is the input projection x @ W_ih^T + b_ih ----------

def _rnn_step(xp, h, w_hh, b_hh, relu):
    pre = framework.addmm(xp, h, w_hh.t())
    if b_hh is not None:
        pre = pre + b_hh
    return F.relu(pre) if relu else framework.tanh(pre)


def _lstm_step(xp, h, c, w_hh, b_hh, w_hr):
    gates = framework.addmm(xp, h, w_hh.t())
    if b_hh is not None:
        gates = gates + b_hh
    # one sigmoid over all four gates (the g quarter unused) costs fewer ops than three
    quarter = [gates.shape[1] // 4] * 4
    i, f, _, o = _split(framework.sigmoid(gates), quarter, 1)
    g = framework.tanh(_split(gates, quarter, 1)[2])
    c = framework.addcmul(f * c, i, g)
    h = o * framework.tanh(c)
    if w_hr is not None:
        h = framework.mm(h, w_hr.t())
    return h, c


def _gru_step(xp, h, w_hh, b_hh):
    hidden = h.shape[1]
    hp = framework.mm(h, w_hh.t()) if b_hh is None else framework.addmm(b_hh, h, w_hh.t())
    x_rz, x_n = _split(xp, [2 * hidden, hidden], 1)
    h_rz, h_n = _split(hp, [2 * hidden, hidden], 1)
    r, z = _split(framework.sigmoid(x_rz + h_rz), [hidden, hidden], 1)
    n = framework.tanh(framework.addcmul(x_n, r, h_n))
    return framework.addcmul(n, z, h - n)


def _run_direction(mode, xp, batch_sizes, state, w_hh, b_hh, w_hr, reverse):
    """Runs one layer in one direction over packed rows.

    ``xp``: input projections (sum(batch_sizes), gates), time step after time step;
    ``state``: the initial hidden state ``(h,)`` or ``(h, c)``, each (batch_sizes[0], *).
    Returns the outputs (sum(batch_sizes), H_out) and the final state in batch order.
    """
    steps_in = _split(xp, batch_sizes, 0)
    order = range(len(batch_sizes) - 1, -1, -1) if reverse else range(len(batch_sizes))
    if reverse:
        # backwards in time the batch grows: the state starts with the sequences still
        # running at the last step, and each longer-ago step adds the rows (sorted longest
        # first) of sequences that end there, taken from the initial state
        first = batch_sizes[-1]
        rest = [batch_sizes[0] - first] if batch_sizes[0] > first else []
        pieces = [_split(s, [first] + rest, 0) for s in state]
        cur = [p[0] for p in pieces]
        pending = [p[1] if rest else None for p in pieces]
    else:
        cur = list(state)
    finished = []      # forward: rows that stopped, latest last
    outs = []
    for t in order:
        bs = batch_sizes[t]
        active = cur[0].shape[0]
        if bs < active:         # forward only: rows bs.. end here
            parts = [_split(s, [bs, active - bs], 0) for s in cur]
            finished.append([p[1] for p in parts])
            cur = [p[0] for p in parts]
        elif bs > active:       # reverse only: rows active..bs start here from state
            grow = bs - active
            left = pending[0].shape[0] - grow
            parts = [_split(p, [grow] + ([left] if left else []), 0) for p in pending]
            cur = [framework.cat([s, p[0]]) for s, p in zip(cur, parts)]
            pending = [p[1] if left else None for p in parts]
        x = steps_in[t]
        if mode == "LSTM":
            cur = list(_lstm_step(x, cur[0], cur[1], w_hh, b_hh, w_hr))
        elif mode == "GRU":
            cur = [_gru_step(x, cur[0], w_hh, b_hh)]
        else:
            cur = [_rnn_step(x, cur[0], w_hh, b_hh, mode == "RNN_RELU")]
        outs.append(cur[0])
    if reverse:
        outs.reverse()
    final = cur
    if finished:
        final = [framework.cat([s] + [f[k] for f in reversed(finished)])
                 for k, s in enumerate(cur)]
    return framework.cat(outs), final


class RNNBase(Module):
    r"""Base class of ``RNN``, ``LSTM`` and ``GRU``: parameters ``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}`` (``weight_hr_l{k}`` with LSTM
    projections), suffixed ``_reverse`` for the backward direction, all initialised from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, "
                          "so non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        for name, value in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(value, int):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        gates = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}.get(mode)
        if gates is None:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = gates * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        factory = {"device": device, "dtype": dtype}
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else real_hidden * num_directions
            for direction in range(num_directions):
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)),
                          ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(framework.empty(shape, **factory)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op (kept for PyTorch compatibility: there is no cuDNN weight buffer)."""

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # -- checks (PyTorch's texts) ---------------------------------------------------------------
    def check_input(self, input, batch_sizes):
        weight = self._flat_weights[0]
        if input.dtype != weight.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight.dtype}). Convert input: input.to({weight.dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_dim:
            raise RuntimeError(f"input must have {expected_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx, expected_hidden_size,
                          msg="Expected hidden size {}, got {}"):
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        if permutation is None:
            return hx
        if isinstance(hx, tuple):
            return tuple(h.index_select(1, permutation) for h in hx)
        return hx.index_select(1, permutation)

    # -- the computation ---------------------------------------------------------------------
    def _zeros_state(self, batch, like):
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        h = framework.zeros(self.num_layers * num_directions, batch, size, dtype=like.dtype,
                            device=like.device)
        if self.mode != "LSTM":
            return h
        c = framework.zeros(self.num_layers * num_directions, batch, self.hidden_size,
                            dtype=like.dtype, device=like.device)
        return (h, c)

    def _run(self, data, batch_sizes, hx, cast=None):
        """All layers over packed rows ``data`` (sum(batch_sizes), input_size); ``hx`` is
        the initial state (h,) or (h, c), each (layers * directions, batch, *); ``cast``,
        if given, is applied to each weight. Returns the last layer's outputs and the
        final states, stacked as ``hx``."""
        num_directions = 2 if self.bidirectional else 1
        n_states = len(hx)
        per_state = [_split(s, [1] * s.shape[0], 0) for s in hx]
        finals = [[] for _ in range(n_states)]
        layer_input = data
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                idx = layer * num_directions + direction
                weights = [getattr(self, n) for n in self._all_weights[idx]]
                if cast is not None:
                    weights = [cast(w) for w in weights]
                w_ih, w_hh = weights[0], weights[1]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                w_hr = weights[-1] if self.proj_size > 0 else None
                if b_ih is not None and self.mode != "GRU":
                    # b_hh is added once to the whole sequence's projection, not per step
                    xp = F.linear(layer_input, w_ih, b_ih + b_hh)
                    step_bias = None
                else:
                    xp = F.linear(layer_input, w_ih, b_ih)
                    step_bias = b_hh
                state = [s[idx].squeeze(0) for s in per_state]
                out, final = _run_direction(self.mode, xp, batch_sizes, state, w_hh,
                                            step_bias, w_hr, reverse=direction == 1)
                outs.append(out)
                for k in range(n_states):
                    finals[k].append(final[k])
            layer_input = outs[0] if num_directions == 1 else framework.cat(outs, 1)
            if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                layer_input = F.dropout(layer_input, p=self.dropout, training=True)
        return layer_input, tuple(framework.stack(f) for f in finals)

    def _forward_impl(self, input, hx):
        PackedSequence = _packed_sequence_type()
        name = {"RNN_TANH": "RNN", "RNN_RELU": "RNN"}.get(self.mode, self.mode)
        is_lstm = self.mode == "LSTM"
        packed = isinstance(input, PackedSequence)
        if packed:
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
            if hx is None:
                hx = self._zeros_state(batch_sizes[0], data)
            else:
                hx = self.permute_hidden(hx, sorted_indices)
            self._check_state(data, hx, batch_sizes_t)
            output, hidden = self._run(data, batch_sizes, hx if is_lstm else (hx,))
            hidden = hidden if is_lstm else hidden[0]
            return (PackedSequence(output, batch_sizes_t, sorted_indices, unsorted_indices),
                    self.permute_hidden(hidden, unsorted_indices))

        if input.dim() not in (2, 3):
            tail = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tail} instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        if hx is not None:
            self._check_state_dims(hx, is_batched)
            if not is_batched:
                hx = tuple(h.unsqueeze(1) for h in hx) if is_lstm else hx.unsqueeze(1)
        batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            hx = self._zeros_state(batch, input)
        self._check_state(input, hx, None)
        seq = input.transpose(0, 1) if self.batch_first else input
        steps = seq.shape[0]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        data = seq.reshape(steps * batch, self.input_size)
        cast = None
        ac = _autocast.state
        if is_lstm and not self.proj_size and ac.active and ac.enabled["cpu"]:
            # PyTorch's CPU LSTM (its oneDNN layer, used without projections on unpacked
            # input) is autocast as a whole: input, state and weights in the lower dtype
            to = ac.dtype["cpu"]
            cast = functools.partial(_autocast._cast, to=to, dev="cpu")
            data, hx = cast(data), tuple(cast(h) for h in hx)
        output, hidden = self._run(data, [batch] * steps, hx if is_lstm else (hx,), cast)
        output = output.reshape(steps, batch, output.shape[-1])
        if self.batch_first:
            output = output.transpose(0, 1)
        hidden = hidden if is_lstm else hidden[0]
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden) if is_lstm else hidden.squeeze(1)
        return output, hidden

    def _check_state_dims(self, hx, is_batched):
        want = 3 if is_batched else 2
        kind = "batched 3-D" if is_batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if hx[0].dim() != want or hx[1].dim() != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
        elif hx.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.dim()}-D tensor")

    def _check_state(self, input, hx, batch_sizes):
        self.check_forward_args(input, hx, batch_sizes)


class RNN(RNNBase):
    r"""Elman RNN: :math:`h_t = \tanh(x_t W_{ih}^T + b_{ih} + h_{t-1} W_{hh}^T + b_{hh})`
    (or ReLU), stacked ``num_layers`` deep.

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``. Input ``(L, N, H_in)`` (or
    ``(N, L, H_in)`` with ``batch_first``, ``(L, H_in)`` unbatched, or a PackedSequence);
    returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if self.nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(modes[self.nonlinearity], *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


class LSTM(RNNBase):
    r"""Long short-term memory, stacked ``num_layers`` deep, with an optional projection of
    the hidden state to ``proj_size``.

    ``LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0)``; ``forward(input, (h_0, c_0))``
    returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes):
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def forward(self, input, hx=None):
        if hx is not None:
            hx = tuple(hx)
        return self._forward_impl(input, hx)


class GRU(RNNBase):
    r"""Gated recurrent unit, stacked ``num_layers`` deep:
    :math:`n_t = \tanh(W_{in} x_t + b_{in} + r_t \odot (W_{hn} h_{t-1} + b_{hn}))`,
    :math:`h_t = (1 - z_t) \odot n_t + z_t \odot h_{t-1}`.

    ``GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward_impl(input, hx)


# -- cells ------------------------------------------------------------------------------------

class RNNCellBase(Module):
    r"""Base class of the single-step cells: ``weight_ih`` (chunks * hidden, input),
    ``weight_hh`` (chunks * hidden, hidden), ``bias_ih``, ``bias_hh``, initialised from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(framework.empty(num_chunks * hidden_size, input_size,
                                                   **factory))
        self.weight_hh = Parameter(framework.empty(num_chunks * hidden_size, hidden_size,
                                                   **factory))
        if bias:
            self.bias_ih = Parameter(framework.empty(num_chunks * hidden_size, **factory))
            self.bias_hh = Parameter(framework.empty(num_chunks * hidden_size, **factory))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += f", bias={self.bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _prepare(self, name, input, hx, n_states=1):
        """Checks ranks, adds the batch dimension to unbatched input and state, checks
        sizes; returns (input, states, is_batched)."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D "
                             "instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        if hx is not None:
            for i, h in enumerate(states):
                if h.dim() not in (1, 2):
                    what = f"hx[{i}]" if isinstance(hx, tuple) else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got "
                                     f"{h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = framework.zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                    device=input.device)
            states = (zeros,) * n_states
        elif not is_batched:
            states = tuple(h.unsqueeze(0) for h in states)
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} "
                               f"expected {self.input_size}")
        for i, h in enumerate(states):
            if input.size(0) != h.size(0):
                raise RuntimeError(f"Input batch size {input.size(0)} doesn't match "
                                   f"hidden{i} batch size {h.size(0)}")
            if h.size(1) != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                                   f"expected {self.hidden_size}")
        return input, states, is_batched


class RNNCell(RNNCellBase):
    r"""One Elman RNN step: :math:`h' = \tanh(x W_{ih}^T + b_{ih} + h W_{hh}^T + b_{hh})`
    (or ReLU). ``RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (h,), is_batched = self._prepare("RNNCell", input, hx)
        xp = F.linear(input, self.weight_ih, self.bias_ih)
        out = _rnn_step(xp, h, self.weight_hh, self.bias_hh, self.nonlinearity == "relu")
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    r"""One LSTM step; ``forward(input, (h, c))`` returns ``(h', c')``.
    ``LSTMCell(input_size, hidden_size, bias=True)``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        hx = None if hx is None else tuple(hx)
        input, (h, c), is_batched = self._prepare("LSTMCell", input, hx, n_states=2)
        xp = F.linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(xp, h, c, self.weight_hh, self.bias_hh, None)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    r"""One GRU step. ``GRUCell(input_size, hidden_size, bias=True)``."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        input, (h,), is_batched = self._prepare("GRUCell", input, hx)
        xp = F.linear(input, self.weight_ih, self.bias_ih)
        out = _gru_step(xp, h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)
