"""Dynamically quantized LSTM (PyTorch's ``DynamicQuantizedLSTM``): qint8 weights, each
gate matmul done by ``linear_dynamic`` as PyTorch's CPU ``quantized_lstm`` does it."""
import framework as fw
from framework import nn
from .... import per_channel_affine, per_channel_symmetric, qint8
from ....quantization.qconfig import default_dynamic_qconfig
from ..modules import LinearPackedParams
from .linear import linear_dynamic

__all__ = ["LSTM"]


def _quantize_weight(weight, observer):
    weight = weight.detach().float()
    observer(weight)
    scale, zp = observer.calculate_qparams()
    if observer.qscheme in (per_channel_affine, per_channel_symmetric):
        return fw.quantize_per_channel(weight, scale.double(), zp.long(), observer.ch_axis,
                                       qint8)
    return fw.quantize_per_tensor(weight, float(scale), int(zp), qint8)


class LSTM(nn.Module):
    """A dynamically quantized LSTM, made by ``quantize_dynamic`` from an ``nn.LSTM``.

    ``_all_weight_values`` holds, per layer and direction, the packed (qint8 weight, float
    bias) of the input-hidden and of the hidden-hidden matmul. Inputs are quantized on the
    fly: the input-hidden product of a whole sequence at once (one scale for it), the
    hidden-hidden product at each step."""

    _FLOAT_MODULE = nn.LSTM

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=qint8):
        super().__init__()
        if dtype is not qint8:
            raise NotImplementedError(
                f"framework: dynamically quantized LSTM supports dtype=qint8 only, got {dtype}")
        self.mode = "LSTM"
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first = bias, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        self.dtype = dtype
        self._all_weight_values = nn.ModuleList()

    def _get_name(self):
        return "DynamicQuantizedLSTM"

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s

    def __repr__(self):
        # the packed weights are not children to show, as in PyTorch
        return f"{self._get_name()}({self.extra_repr()})"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """Quantizes each weight of a float ``nn.LSTM`` with its own weight observer (the
        module's qconfig's, else the default dynamic qconfig's)."""
        if type(mod) is not nn.LSTM:
            raise AssertionError("nn.quantized.dynamic.LSTM.from_float only works for "
                                 f"nn.LSTM, got {type(mod).__name__}")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError("framework: dynamically quantized LSTM does not "
                                      "support proj_size > 0")
        qconfig = getattr(mod, "qconfig", None) or default_dynamic_qconfig
        dtype = qconfig.weight().dtype
        if dtype is not qint8:
            raise RuntimeError(f"Unsupported dtype for dynamic RNN quantization: {dtype}")
        out = cls(mod.input_size, mod.hidden_size, mod.num_layers, mod.bias, mod.batch_first,
                  mod.dropout, mod.bidirectional, dtype)
        for layer in range(mod.num_layers):
            for suffix in ("", "_reverse")[:2 if mod.bidirectional else 1]:
                for kind in ("ih", "hh"):
                    w = getattr(mod, f"weight_{kind}_l{layer}{suffix}")
                    b = getattr(mod, f"bias_{kind}_l{layer}{suffix}") if mod.bias else None
                    packed = LinearPackedParams(dtype)
                    packed.set_weight_bias(_quantize_weight(w, qconfig.weight()),
                                           None if b is None else b.detach().clone())
                    out._all_weight_values.append(packed)
        return out

    def _direction(self, x, h, c, ih, hh, reverse):
        """One direction of one layer over the sequence ``x`` (T, B, F)."""
        # PyTorch's CPU path quantizes the whole sequence for the input-hidden matmul
        pre = linear_dynamic(x, ih._weight, ih._bias, reduce_range=True)
        steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
        outs = [None] * x.shape[0]
        for t in steps:
            gates = linear_dynamic(h, hh._weight, hh._bias, reduce_range=True) + pre[t]
            i, f, g, o = gates.chunk(4, 1)
            c = f.sigmoid() * c + i.sigmoid() * g.tanh()
            h = o.sigmoid() * c.tanh()
            outs[t] = h
        return fw.stack(outs), h, c

    def forward(self, input, hx=None):
        if isinstance(input, nn.utils.rnn.PackedSequence):
            raise NotImplementedError("framework: dynamically quantized LSTM does not take "
                                      "a PackedSequence; pad the batch instead")
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")
        x = input.transpose(0, 1) if self.batch_first else input
        dirs = 2 if self.bidirectional else 1
        if hx is None:
            zeros = fw.zeros(self.num_layers * dirs, x.shape[1], self.hidden_size,
                             dtype=input.dtype, device=input.device)
            hx = (zeros, zeros)
        h0, c0 = hx
        want = (self.num_layers * dirs, x.shape[1], self.hidden_size)
        for name, t in (("hidden", h0), ("cell", c0)):
            if tuple(t.shape) != want:
                raise RuntimeError(f"Expected {name} size {want}, got {tuple(t.shape)}")
        hs, cs = [], []
        with fw.no_grad():
            for layer in range(self.num_layers):
                outs = []
                for d in range(dirs):
                    k = layer * dirs + d
                    ih, hh = self._all_weight_values[2 * k], self._all_weight_values[2 * k + 1]
                    y, h, c = self._direction(x, h0[k], c0[k], ih, hh, reverse=d == 1)
                    outs.append(y)
                    hs.append(h)
                    cs.append(c)
                x = outs[0] if dirs == 1 else fw.cat(outs, 2)
                if self.dropout and self.training and layer < self.num_layers - 1:
                    x = nn.functional.dropout(x, self.dropout, True)
        out = x.transpose(0, 1) if self.batch_first else x
        return out, (fw.stack(hs), fw.stack(cs))
