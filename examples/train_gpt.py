"""`make demo`: trains a small GPT (nanoGPT style) on the bytes of Python's own standard library.

The corpus needs no download: it is the ``.py`` files of the running interpreter's standard
library (``sysconfig.get_paths()["stdlib"]``; the top-level modules, then the packages as
far as the GPU's larger corpus needs), read as bytes (a vocabulary of 256), split into
training and held-out files. The script trains with AdamW,
a warm-up + cosine learning-rate schedule, gradient clipping and gradient accumulation,
evaluates on the held-out files, saves a checkpoint with ``framework.save``, reloads it into a
fresh model and checks the held-out loss is unchanged, samples some text, and draws the loss
curve. It is written as a PyTorch script would be: only ``import framework as torch``.

    python examples/train_gpt.py [--device cpu|cuda] [--steps N] [--batch-size B]
        [--block-size T] [--n-layer L] [--compile] [--resume] [--out DIR]

``--compile`` trains with ``torch.compile(model)`` (as nanoGPT's flag; on cuda its pointwise
chains and its matmuls with the ops after them become generated kernels); evaluation,
sampling and the checkpoint use the model itself, so its state-dict keys are unchanged.

On the CPU the defaults train for one to two minutes (2 cores); on a GPU the model is larger
and runs under bfloat16 autocast. Losses are in nats per byte (divide by ln 2 for bits).
"""
import argparse
import math
import os
import sys
import sysconfig
import time
from dataclasses import dataclass

import numpy as np

import framework as torch
import framework.nn as nn
import framework.nn.functional as F
from framework.utils.data import DataLoader, Dataset

try:
    from tqdm import tqdm
except ImportError:   # tqdm is in the demo extra: `pip install -e ".[demo]"`
    tqdm = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- the model ------------------------------------------------------------------------------

@dataclass
class GPTConfig:
    vocab_size: int = 256
    block_size: int = 64
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        assert cfg.n_embd % cfg.n_head == 0
        self.n_head, self.dropout = cfg.n_head, cfg.dropout
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        # (B, T, C) -> (B, n_head, T, head_dim)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                           dropout_p=self.dropout if self.training else 0.0)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.dropout = nn.Dropout(cfg.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))       # pre-norm residual blocks
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)])
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.lm_head.weight = self.wte.weight    # weight tying
        self.apply(self._init_weights)
        for name, p in self.named_parameters():  # GPT-2's scaled init of residual projections
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        assert T <= self.cfg.block_size, f"sequence of {T} > block size {self.cfg.block_size}"
        pos = torch.arange(T, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)).float(), targets.reshape(-1))
        return logits, loss

    def configure_optimizer(self, lr, weight_decay, betas=(0.9, 0.95)):
        """AdamW with weight decay on the matrices (linear and embedding weights) only."""
        params = [p for p in self.parameters() if p.requires_grad]   # tied weight once
        groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
                  {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=lr, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Extends ``idx`` (B, T) by sampling ``max_new_tokens`` tokens one at a time."""
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.cfg.block_size:])
            logits = logits[:, -1, :].float() / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits = logits.masked_fill(logits < v[:, [-1]], float("-inf"))
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat([idx, torch.multinomial(probs, num_samples=1)], dim=1)
        return idx


# ---- the corpus -----------------------------------------------------------------------------

SKIP_DIRS = {"site-packages", "dist-packages", "__pycache__", "test", "tests", "idle_test"}


def source_files(root):
    """The standard library's ``.py`` files in a fixed order: the top-level modules first
    (sorted), then each package's (directories sorted, test suites and site-packages left
    out)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        for name in sorted(filenames):
            if name.endswith(".py"):
                yield os.path.join(dirpath, name)


def load_corpus(max_bytes, max_file_bytes=60_000, val_every=8):
    """Bytes of the standard library's source files (``source_files`` order), files up to
    ``max_file_bytes``, until ``max_bytes`` are read; every ``val_every``-th file is held
    out. Returns (train, val, number of train files, number of val files), uint8 arrays."""
    root = sysconfig.get_paths()["stdlib"]
    train, val, total = [], [], 0
    for path in source_files(root):
        if os.path.getsize(path) > max_file_bytes:   # a few huge files would dominate
            continue
        with open(path, "rb") as f:
            data = f.read()
        held_out = (len(train) + len(val)) % val_every == val_every - 1
        (val if held_out else train).append(data)
        total += len(data)
        if total >= max_bytes:
            break
    if not train or not val:
        raise SystemExit(f"too few source files found under {root}")
    train_bytes = np.frombuffer(b"".join(train), dtype=np.uint8)
    val_bytes = np.frombuffer(b"".join(val), dtype=np.uint8)
    return train_bytes, val_bytes, len(train), len(val)


def unigram_entropy(data):
    """Entropy of the byte frequencies of ``data``, in nats."""
    p = np.bincount(data, minlength=256) / len(data)
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


class RandomWindows(Dataset):
    """``num_samples`` windows of ``block_size + 1`` bytes at random offsets of ``data``:
    item i is (x, y) with y the next byte after each x. Offsets are drawn once from ``seed``."""

    def __init__(self, data, block_size, num_samples, seed):
        self.data = torch.from_numpy(data.astype(np.int64))
        self.block_size = block_size
        rng = np.random.default_rng(seed)
        self.starts = rng.integers(0, len(data) - block_size - 1, size=num_samples).tolist()

    def __len__(self):
        return len(self.starts)

    def __getitem__(self, i):
        chunk = self.data[self.starts[i]:self.starts[i] + self.block_size + 1]
        return chunk[:-1], chunk[1:]


def eval_batches(data, block_size, batch_size, max_windows):
    """Fixed, evenly spaced windows over ``data`` (the same each call), in batches."""
    n = min(max_windows, (len(data) - 1) // block_size)
    starts = np.linspace(0, len(data) - block_size - 1, n).astype(np.int64)
    idx = starts[:, None] + np.arange(block_size + 1)[None, :]
    windows = torch.from_numpy(data[idx].astype(np.int64))
    return [(w[:, :-1], w[:, 1:]) for w in windows.split(batch_size)]


@torch.no_grad()
def evaluate(model, batches, device, autocast):
    """Mean cross-entropy (nats per byte) over the given batches, in eval mode."""
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for x, y in batches:
        with autocast():
            _, loss = model(x.to(device), y.to(device))
        total += loss.item() * y.numel()
        count += y.numel()
    model.train(was_training)
    return total / count


# ---- training -------------------------------------------------------------------------------

def lr_lambda(warmup, total, min_ratio=0.1):
    """Linear warm-up over ``warmup`` steps, then cosine decay to ``min_ratio`` of the peak."""
    def f(step):
        if step < warmup:
            return (step + 1) / warmup
        t = min(1.0, (step - warmup) / max(1, total - warmup))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * t))
    return f


def plot(history, val_points, entropy, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no loss curve (pip install -e '.[demo]')")
        return False
    steps, losses = zip(*history)
    smooth, acc = [], None
    for v in losses:                       # exponential moving average for readability
        acc = v if acc is None else 0.9 * acc + 0.1 * v
        smooth.append(acc)
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(steps, losses, color="tab:blue", alpha=0.25, lw=0.8, label="train (per step)")
    ax.plot(steps, smooth, color="tab:blue", label="train (EMA)")
    if val_points:
        vs, vl = zip(*val_points)
        ax.plot(vs, vl, "o-", color="tab:orange", label="held-out")
    ax.axhline(entropy, color="tab:gray", ls="--", label="unigram entropy of the corpus")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats / byte)")
    ax.set_title("GPT on the Python standard library (bytes)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def parse_args(argv=None):
    cuda = torch.cuda.is_available() and not torch.cuda.is_simulated()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cuda" if cuda else "cpu")
    ap.add_argument("--steps", type=int, default=None, help="optimizer steps")
    ap.add_argument("--batch-size", type=int, default=None, help="sequences per micro-batch")
    ap.add_argument("--grad-accum", type=int, default=None, help="micro-batches per step")
    ap.add_argument("--block-size", type=int, default=None, help="context length (bytes)")
    ap.add_argument("--n-layer", type=int, default=None)
    ap.add_argument("--n-head", type=int, default=None)
    ap.add_argument("--n-embd", type=int, default=None)
    ap.add_argument("--dropout", type=float, default=0.0)
    ap.add_argument("--lr", type=float, default=None, help="peak learning rate")
    ap.add_argument("--weight-decay", type=float, default=0.1)
    ap.add_argument("--grad-clip", type=float, default=1.0)
    ap.add_argument("--corpus-bytes", type=int, default=None)
    ap.add_argument("--eval-windows", type=int, default=None)
    ap.add_argument("--num-workers", type=int, default=0)
    ap.add_argument("--sample-bytes", type=int, default=200)
    ap.add_argument("--temperature", type=float, default=0.8)
    ap.add_argument("--top-k", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1337)
    ap.add_argument("--compile", action="store_true",
                    help="train with torch.compile(model) (evaluation stays eager)")
    ap.add_argument("--resume", action="store_true", help="continue from OUT/ckpt.pt")
    ap.add_argument("--out", default=os.path.join(REPO, "build", "demo"),
                    help="directory for the checkpoint and the loss curve")
    args = ap.parse_args(argv)
    gpu = args.device.startswith("cuda")
    # CPU defaults fit ~2 minutes on 2 cores; GPU defaults are a bigger nanoGPT-like model
    defaults = dict(steps=1000, batch_size=32, grad_accum=2, block_size=256, n_layer=6,
                    n_head=6, n_embd=384, lr=1e-3, corpus_bytes=4_000_000,
                    eval_windows=512) if gpu else \
        dict(steps=500, batch_size=16, grad_accum=2, block_size=64, n_layer=4, n_head=4,
             n_embd=128, lr=2e-3, corpus_bytes=1_500_000, eval_windows=256)
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    return args


def main(argv=None):
    args = parse_args(argv)
    t_start = time.perf_counter()
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    use_bf16 = device.type == "cuda"
    autocast = (lambda: torch.autocast(device_type="cuda", dtype=torch.bfloat16)) if use_bf16 \
        else (lambda: torch.autocast(device_type="cpu", enabled=False))
    os.makedirs(args.out, exist_ok=True)
    ckpt_path = os.path.join(args.out, "ckpt.pt")

    train_data, val_data, n_train, n_val = load_corpus(args.corpus_bytes)
    h_nats = unigram_entropy(np.concatenate([train_data, val_data]))
    print(f"corpus: {sysconfig.get_paths()['stdlib']}: {n_train} train files "
          f"({len(train_data):,} bytes), {n_val} held-out files ({len(val_data):,} bytes)")
    print(f"unigram entropy of the corpus: {h_nats:.4f} nats/byte "
          f"({h_nats / math.log(2):.4f} bits/byte)")

    cfg = GPTConfig(block_size=args.block_size, n_layer=args.n_layer, n_head=args.n_head,
                    n_embd=args.n_embd, dropout=args.dropout)
    model = GPT(cfg).to(device)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"model: {cfg} ({n_params / 1e6:.2f}M parameters) on {device}"
          f"{' with bfloat16 autocast' if use_bf16 else ', float32'}"
          f"{', compiled' if args.compile else ''}")
    # the training forward only: eval, sampling and the checkpoint use the model itself
    train_model = torch.compile(model) if args.compile else model
    optimizer = model.configure_optimizer(args.lr, args.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lr_lambda(max(1, args.steps // 10), args.steps))
    step, history, val_points = 0, [], []     # (step, loss) pairs for the loss curve
    if args.resume:
        ckpt = torch.load(ckpt_path, map_location=device)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        scheduler.load_state_dict(ckpt["scheduler"])
        step = ckpt["step"]
        history = [tuple(h) for h in ckpt.get("history", [])]
        val_points = [tuple(v) for v in ckpt.get("val_points", [])]
        print(f"resumed from {ckpt_path} at step {step}")

    micro = args.batch_size
    todo = max(0, args.steps - step)
    windows = RandomWindows(train_data, cfg.block_size, todo * args.grad_accum * micro,
                            seed=args.seed + step)
    loader = DataLoader(windows, batch_size=micro, shuffle=False, drop_last=True,
                        num_workers=args.num_workers)
    val_batches = eval_batches(val_data, cfg.block_size, 64, args.eval_windows)
    eval_every = max(1, args.steps // 5)

    tokens_per_step = args.grad_accum * micro * cfg.block_size
    bar = tqdm(total=todo, desc="train", dynamic_ncols=True,
               mininterval=1.0 if sys.stderr.isatty() else 10.0) if tqdm else None
    batches = iter(loader)
    model.train()
    t_train = 0.0
    while step < args.steps:
        t_step = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        step_loss = 0.0
        for _ in range(args.grad_accum):
            x, y = next(batches)
            x, y = x.to(device), y.to(device)
            with autocast():
                _, loss = train_model(x, y)
            (loss / args.grad_accum).backward()     # gradients add up over micro-batches
            step_loss += loss.item() / args.grad_accum
        grad_norm = nn.utils.clip_grad_norm_(model.parameters(), args.grad_clip)
        optimizer.step()
        scheduler.step()
        step += 1
        t_train += time.perf_counter() - t_step
        history.append((step, step_loss))
        lr = scheduler.get_last_lr()[0]
        tok_s = tokens_per_step / (time.perf_counter() - t_step)
        if bar is not None:
            bar.update(1)
            bar.set_postfix(loss=f"{step_loss:.3f}", lr=f"{lr:.2e}", tok_s=f"{tok_s:,.0f}",
                            refresh=False)
        elif step % 50 == 0 or step == args.steps:
            print(f"step {step:5d}  loss {step_loss:.4f}  lr {lr:.2e}  {tok_s:,.0f} tok/s")
        if step % eval_every == 0 or step == args.steps:
            val_points.append((step, evaluate(model, val_batches, device, autocast)))
            msg = (f"step {step}: train loss {step_loss:.4f}, held-out loss "
                   f"{val_points[-1][1]:.4f}, grad norm {float(grad_norm):.2f}")
            if bar is not None:
                bar.write(msg)
            else:
                print(msg)
    if bar is not None:
        bar.close()
    if todo:
        print(f"trained {todo} steps in {t_train:.1f} s "
              f"({todo * tokens_per_step / t_train:,.0f} tokens/s)")

    val_loss = evaluate(model, val_batches, device, autocast)
    print(f"held-out loss: {val_loss:.4f} nats/byte ({val_loss / math.log(2):.4f} bits/byte)"
          f" vs unigram entropy {h_nats:.4f} nats/byte: "
          f"{'below' if val_loss < h_nats else 'NOT below'} by {h_nats - val_loss:.4f}")

    # checkpoint, then a fresh model from it must give the same held-out loss
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "step": step, "config": vars(cfg),
                "history": history, "val_points": val_points},
               ckpt_path)
    ckpt = torch.load(ckpt_path, map_location=device)
    fresh = GPT(GPTConfig(**ckpt["config"])).to(device)
    fresh.load_state_dict(ckpt["model"])
    reloaded = evaluate(fresh, val_batches, device, autocast)
    same = abs(reloaded - val_loss) <= 1e-6 * max(1.0, abs(val_loss))
    print(f"checkpoint {ckpt_path} (step {ckpt['step']}): reloaded held-out loss "
          f"{reloaded:.6f} vs {val_loss:.6f}: {'unchanged' if same else 'CHANGED'}")

    # sample from the reloaded model
    prompt = b"def "
    idx = torch.tensor([list(prompt)], dtype=torch.long, device=device)
    torch.manual_seed(args.seed)
    out = fresh.generate(idx, args.sample_bytes, temperature=args.temperature,
                         top_k=args.top_k)
    text = bytes(out[0].tolist()).decode("utf-8", errors="replace")
    print(f"sample (temperature {args.temperature}, top-k {args.top_k}):\n{'-' * 60}\n"
          f"{text}\n{'-' * 60}")

    png = os.path.join(args.out, "loss.png")
    if history and plot(history, val_points, h_nats, png):
        print(f"loss curve: {png}")
    print(f"total time {time.perf_counter() - t_start:.1f} s")
    if not same:
        raise SystemExit("the reloaded checkpoint gives a different held-out loss")
    return val_loss, h_nats


if __name__ == "__main__":
    main()
