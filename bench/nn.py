"""nn layers and training steps beside PyTorch (same machine, same process, medians).

Each case is written once against the torch API and run with ``T = framework`` and then
``T = torch``: forward+backward of single layers, and one training step (forward,
backward, plain SGD update) of an MLP, a small CNN and a small transformer.

    python bench/nn.py [--device cpu|cuda] [--quick] [--out FILE]
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from _timing import median_time  # noqa: E402

import framework as fw  # noqa: E402


def _sync(T, device):
    if device == "cuda":
        T.cuda.synchronize()


def layer_case(make_layer, make_inputs, loss=None):
    """fwd+bwd of one layer: ``make_layer(T)`` and ``make_inputs(T, device)``."""
    def build(T, device):
        layer = make_layer(T).to(device)
        inputs = make_inputs(T, device)

        def run():
            out = layer(*inputs)
            out = out[0] if isinstance(out, tuple) else out
            (loss(T, out) if loss else out.float().square().mean()).backward()
            for p in layer.parameters():
                p.grad = None
            for x in inputs:
                if getattr(x, "requires_grad", False):
                    x.grad = None
            _sync(T, device)
        return run
    return build


def step_case(make_model, make_batch):
    """One training step: forward, cross-entropy, backward, SGD update."""
    def build(T, device):
        model = make_model(T).to(device)
        x, y = make_batch(T, device)
        opt_params = list(model.parameters())

        def run():
            loss = T.nn.functional.cross_entropy(model(x), y)
            for p in opt_params:
                p.grad = None
            loss.backward()
            with T.no_grad():
                for p in opt_params:
                    p.add_(p.grad, alpha=-0.01)
            _sync(T, device)
        return run
    return build


def _randn(T, device, *shape, grad=True):
    return T.randn(*shape, device=device).requires_grad_(grad)


def _tokens(T, device, *shape, high=10):
    return T.randint(0, high, shape, device=device)


def block(T, d, heads):
    """A pre-norm transformer block built from either framework's nn."""
    nn = T.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            h = self.ln1(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(self.ln2(x))
    return Block()


def tiny_transformer(T, vocab=256, d=128, heads=4, layers=2):
    nn = T.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(vocab, d)
            self.blocks = nn.Sequential(*[block(T, d, heads) for _ in range(layers)])
            self.ln = nn.LayerNorm(d)
            self.head = nn.Linear(d, vocab)

        def forward(self, idx):
            return self.head(self.ln(self.blocks(self.emb(idx)))).flatten(0, 1)
    return Model()


def small_cnn(T):
    nn = T.nn
    return nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))


def cases(quick):
    b = 2 if quick else 8
    return [
        ("Linear 1024->1024, batch 256 (fwd+bwd)",
         layer_case(lambda T: T.nn.Linear(1024, 1024),
                    lambda T, dev: [_randn(T, dev, 256, 1024)])),
        ("Conv2d 64->64 3x3, 56x56, batch %d (fwd+bwd)" % b,
         layer_case(lambda T: T.nn.Conv2d(64, 64, 3, padding=1, bias=False),
                    lambda T, dev: [_randn(T, dev, b, 64, 56, 56)])),
        ("Conv2d 128->128 3x3, 28x28, batch %d (fwd+bwd)" % b,
         layer_case(lambda T: T.nn.Conv2d(128, 128, 3, padding=1, bias=False),
                    lambda T, dev: [_randn(T, dev, b, 128, 28, 28)])),
        ("Conv2d 256->256 3x3, 14x14, batch %d (fwd+bwd)" % b,
         layer_case(lambda T: T.nn.Conv2d(256, 256, 3, padding=1, bias=False),
                    lambda T, dev: [_randn(T, dev, b, 256, 14, 14)])),
        ("Conv2d 512->512 3x3, 7x7, batch %d (fwd+bwd)" % b,
         layer_case(lambda T: T.nn.Conv2d(512, 512, 3, padding=1, bias=False),
                    lambda T, dev: [_randn(T, dev, b, 512, 7, 7)])),
        ("LSTM 256->256, seq 64, batch 16 (fwd+bwd)",
         layer_case(lambda T: T.nn.LSTM(256, 256),
                    lambda T, dev: [_randn(T, dev, 64, 16, 256)])),
        ("MultiheadAttention d=256 h=8, seq 128, batch 8 (fwd+bwd)",
         layer_case(lambda T: _SelfAttention(T, 256, 8),
                    lambda T, dev: [_randn(T, dev, 8, 128, 256)])),
        ("LayerNorm 1024, 4096 rows (fwd+bwd)",
         layer_case(lambda T: T.nn.LayerNorm(1024),
                    lambda T, dev: [_randn(T, dev, 4096, 1024)])),
        ("cross_entropy 2048 x 8192 classes (fwd+bwd)",
         layer_case(lambda T: T.nn.Identity(),
                    lambda T, dev: [_randn(T, dev, 2048, 8192)],
                    loss=lambda T, out: T.nn.functional.cross_entropy(
                        out, T.arange(out.shape[0], device=out.device) % out.shape[1]))),
        ("train step: MLP 784-512-512-10, batch 128",
         step_case(lambda T: T.nn.Sequential(T.nn.Linear(784, 512), T.nn.ReLU(),
                                             T.nn.Linear(512, 512), T.nn.ReLU(),
                                             T.nn.Linear(512, 10)),
                   lambda T, dev: (T.randn(128, 784, device=dev), _tokens(T, dev, 128)))),
        ("train step: small CNN, 3x32x32, batch %d" % (4 * b),
         step_case(small_cnn,
                   lambda T, dev: (T.randn(4 * b, 3, 32, 32, device=dev),
                                   _tokens(T, dev, 4 * b)))),
        ("train step: transformer 2x128, seq 64, batch %d" % b,
         step_case(tiny_transformer,
                   lambda T, dev: (_tokens(T, dev, b, 64, high=256),
                                   _tokens(T, dev, b * 64, high=256)))),
    ]


def _SelfAttention(T, d, heads):
    class SelfAttention(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = T.nn.MultiheadAttention(d, heads, batch_first=True)

        def forward(self, x):
            return self.attn(x, x, x, need_weights=False)[0]
    return SelfAttention()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--quick", action="store_true", help="small batches, fewer samples")
    ap.add_argument("--out")
    args = ap.parse_args()
    repeat, min_time = (3, 0.2) if args.quick else (5, 1.0)
    todo = cases(args.quick)
    # framework first: importing torch adds ~10^5 Python objects that every full garbage
    # collection then walks, which slows the framework's Python-level graph, not torch's
    fw.manual_seed(0)
    ours = []
    for name, build in todo:
        try:
            ours.append(median_time(build(fw, args.device), repeat, min_time))
        except Exception as e:  # a missing layer shows in the table, not as a crash
            print(f"framework failed on {name}: {type(e).__name__}: {e}", file=sys.stderr)
            ours.append(float("nan"))
    try:
        import torch
        torch.manual_seed(0)
        torch.set_num_threads(fw.get_num_threads())
        refs = [median_time(build(torch, args.device), repeat, min_time) for _, build in todo]
    except ImportError:
        refs = [float("nan")] * len(todo)
    lines = [f"| case ({args.device}, {fw.get_num_threads()} threads) | framework | torch "
             "| fw/torch |", "|---|---|---|---|"]
    for (name, _), o, r in zip(todo, ours, refs):
        lines.append(f"| {name} | {o * 1e3:.2f} ms | {r * 1e3:.2f} ms | {o / r:.2f}x |")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
