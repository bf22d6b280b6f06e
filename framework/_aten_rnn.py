"""PyTorch's top-level recurrent functions of ATen (``torch.lstm``, ``torch.gru``,
``torch.rnn_tanh``, ``torch.rnn_relu`` and their ``*_cell`` forms), with ATen's positional
signatures: what ``nn.LSTM`` and friends call in PyTorch, and what some scripts call
directly with their own weights.

They run the same recurrences as ``framework.nn``'s layers (``RNNBase._run`` and the cell
steps in ``nn/modules/rnn.py``) on weights given as a flat list, in PyTorch's order: for
each layer and direction ``w_ih, w_hh[, b_ih, b_hh][, w_hr]``.
"""
from .nn import functional as F
from .nn.modules import rnn as _rnn

__all__ = ["lstm", "gru", "rnn_tanh", "rnn_relu", "lstm_cell", "gru_cell", "rnn_tanh_cell",
           "rnn_relu_cell"]


class _Layers:
    """The attributes ``RNNBase._run`` reads of its module, over a flat weight list."""

    def __init__(self, name, mode, params, has_biases, num_layers, dropout, train,
                 bidirectional, has_proj):
        directions = 2 if bidirectional else 1
        per = 2 + 2 * bool(has_biases) + bool(has_proj)
        params = list(params)
        if len(params) != num_layers * directions * per:
            raise RuntimeError(
                f"{name}: expected {num_layers * directions * per} weights ({per} per layer "
                f"and direction for num_layers={num_layers}, bidirectional={bidirectional}, "
                f"has_biases={has_biases}), got {len(params)}")
        self.mode, self.num_layers, self.bidirectional = mode, num_layers, bidirectional
        self.bias, self.proj_size = bool(has_biases), int(bool(has_proj))
        self.dropout, self.training = dropout, train
        self._all_weights = []
        for idx in range(num_layers * directions):
            names = [f"w{idx}_{k}" for k in range(per)]
            for n, p in zip(names, params[idx * per:(idx + 1) * per]):
                setattr(self, n, p)
            self._all_weights.append(names)


def _check_states(name, states, expected):
    for h, size in zip(states, expected):
        if tuple(h.shape) != size:
            raise RuntimeError(f"{name}: expected hidden size {size}, got {tuple(h.shape)}")


def _run(name, mode, args):
    """Both ATen overloads: (input, hx, params, has_biases, num_layers, dropout, train,
    bidirectional, batch_first) and, for packed sequences, (data, batch_sizes, hx, params,
    has_biases, num_layers, dropout, train, bidirectional)."""
    if len(args) != 9:
        raise TypeError(f"{name}() takes 9 positional arguments (input, hx, params, has_biases, "
                        "num_layers, dropout, train, bidirectional, batch_first) or (data, "
                        "batch_sizes, hx, params, has_biases, num_layers, dropout, train, "
                        f"bidirectional), got {len(args)}")
    packed = isinstance(args[3], (list, tuple))
    if packed:
        data, batch_sizes_t, hx, params, has_biases, num_layers, dropout, train, bidir = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidir, batch_first = args
    is_lstm = mode == "LSTM"
    states = tuple(hx) if is_lstm else (hx,)
    if is_lstm and len(states) != 2:
        raise RuntimeError("lstm expects two hidden states")
    has_proj = is_lstm and states[0].shape[-1] != states[1].shape[-1]
    layers = _Layers(name, mode, params, has_biases, num_layers, dropout, train, bidir,
                     has_proj)
    directions = 2 if bidir else 1
    if packed:
        batch_sizes = [int(b) for b in batch_sizes_t.tolist()]
        batch = batch_sizes[0]
        seq = data
    else:
        if data.dim() != 3:
            raise RuntimeError(f"{name}: expected a 3D input (sequence, batch, feature), got "
                               f"{data.dim()}D")
        seq = data.transpose(0, 1) if batch_first else data
        steps, batch = seq.shape[0], seq.shape[1]
        if steps == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        batch_sizes = [batch] * steps
        seq = seq.reshape(steps * batch, seq.shape[2])
    _check_states(name, states, [(num_layers * directions, batch, s.shape[-1]) for s in states])
    out, finals = _rnn.RNNBase._run(layers, seq, batch_sizes, states)
    if not packed:
        out = out.reshape(steps, batch, out.shape[-1])
        if batch_first:
            out = out.transpose(0, 1)
    return (out,) + tuple(finals)


def lstm(*args):
    """``lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` or ``lstm(data, batch_sizes, hx, params, has_biases, num_layers, dropout,
    train, bidirectional)``; ``hx`` is ``(h_0, c_0)``. Returns ``(output, h_n, c_n)``."""
    return _run("lstm", "LSTM", args)


def gru(*args):
    """``gru(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
    batch_first)`` or the packed form (``data, batch_sizes, hx, ...``). Returns
    ``(output, h_n)``."""
    return _run("gru", "GRU", args)


def rnn_tanh(*args):
    """The Elman RNN with tanh, in ``gru``'s two forms. Returns ``(output, h_n)``."""
    return _run("rnn_tanh", "RNN_TANH", args)


def rnn_relu(*args):
    """The Elman RNN with ReLU, in ``gru``'s two forms. Returns ``(output, h_n)``."""
    return _run("rnn_relu", "RNN_RELU", args)


def _cell_input(name, input, states, w_ih, w_hh, b_ih, gates):
    if input.dim() != 2:
        raise RuntimeError(f"{name}: expected input of shape (batch, input_size), got "
                           f"{tuple(input.shape)}")
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{w_ih.size(1)}")
    hidden = w_hh.size(1)
    for i, h in enumerate(states):
        if h.dim() != 2 or h.size(0) != input.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{i} "
                               f"batch size {h.size(0) if h.dim() else 'of a scalar'}")
        if h.size(1) != hidden:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.size(1)}, "
                               f"expected {hidden}")
    if w_ih.size(0) != gates * hidden:
        raise RuntimeError(f"{name}: w_ih has {w_ih.size(0)} rows, expected {gates} * "
                           f"hidden_size = {gates * hidden}")
    return F.linear(input, w_ih, b_ih)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step; ``hx`` is ``(h, c)``. Returns ``(h', c')``."""
    hx = tuple(hx)
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    xp = _cell_input("lstm_cell", input, hx, w_ih, w_hh, b_ih, 4)
    return _rnn._lstm_step(xp, hx[0], hx[1], w_hh, b_hh, None)


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step. Returns ``h'``."""
    xp = _cell_input("gru_cell", input, (hx,), w_ih, w_hh, b_ih, 3)
    return _rnn._gru_step(xp, hx, w_hh, b_hh)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with tanh. Returns ``h'``."""
    xp = _cell_input("rnn_tanh_cell", input, (hx,), w_ih, w_hh, b_ih, 1)
    return _rnn._rnn_step(xp, hx, w_hh, b_hh, relu=False)


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with ReLU. Returns ``h'``."""
    xp = _cell_input("rnn_relu_cell", input, (hx,), w_ih, w_hh, b_ih, 1)
    return _rnn._rnn_step(xp, hx, w_hh, b_hh, relu=True)
