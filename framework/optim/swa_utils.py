"""Stochastic Weight Averaging and EMA of weights (PyTorch's ``torch.optim.swa_utils``)."""
import itertools
import math
import warnings
from copy import deepcopy

from .. import _tensor
from ..autograd.grad_mode import no_grad
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]

Tensor = _tensor.Tensor


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         "[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """In-place EMA over lists of tensors: ``ema += (1 - decay) * (p - ema)``."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point():
                for e, p in zip(ema_param_list, current_param_list):
                    e.lerp_(p, 1 - decay)
            else:
                for e, p in zip(ema_param_list, current_param_list):
                    e.copy_(e * decay + p * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """In-place running mean over lists of tensors."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            if averaged_param_list[0].is_floating_point():
                # as torch: with a (long) tensor count the weight is a float32 value
                w = 1 / (num_averaged + 1)
                w = float(w) if isinstance(w, Tensor) else w
                for a, p in zip(averaged_param_list, current_param_list):
                    a.lerp_(p, w)
            else:
                # integer buffers: the mean truncated back to the integer dtype
                for a, p in zip(averaged_param_list, current_param_list):
                    a.copy_(a + (p - a) / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor, returned: ``decay * ema + (1 - decay) * p``."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Running mean of one tensor, returned."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (and buffers with ``use_buffers``) hold an
    average (SWA by default, or ``avg_fn``/``multi_avg_fn``) of the model's over time."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor_long0(device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the average."""
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.parameters(), model.parameters()
        with no_grad():
            first = bool(self.n_averaged == 0)
            pairs = []
            for a, p in zip(mine, theirs):
                a = a.detach()
                p = p.detach().to(a.device)
                pairs.append((a, p))
                if first:
                    a.copy_(p)
            if not first:
                self._average(pairs)
            if not self.use_buffers:
                for b_avg, b in zip(self.module.buffers(), model.buffers()):
                    b_avg.detach().copy_(b.detach().to(b_avg.device))
            self.n_averaged += 1

    def _average(self, pairs):
        if self.avg_fn is not None:
            for a, p in pairs:
                a.copy_(self.avg_fn(a, p, self.n_averaged.to(a.device)))
            return
        groups = {}
        for a, p in pairs:
            groups.setdefault((str(a.device), a.dtype), []).append((a, p))
        for group in groups.values():
            avg = [a for a, _ in group]
            cur = [p for _, p in group]
            n = self.n_averaged.to(avg[0].device)
            if self.multi_avg_fn is not None:
                self.multi_avg_fn(avg, cur, n)
            elif avg[0].device.type == "cuda":
                get_swa_multi_avg_fn()(avg, cur, n)
            else:
                fn = get_swa_avg_fn()
                for a, p in group:
                    a.copy_(fn(a, p, n))


def _tensor_long0(device):
    from .. import int64, tensor
    return tensor(0, dtype=int64, device=device)


def update_bn(loader, model, device=None):
    """Recompute BatchNorm running statistics with one pass over ``loader``."""
    with no_grad():
        momenta = {}
        for m in model.modules():
            if isinstance(m, _BatchNorm):
                m.reset_running_stats()
                momenta[m] = m.momentum
        if not momenta:
            return
        was_training = model.training
        model.train()
        for m in momenta:
            m.momentum = None
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
        for m, mom in momenta.items():
            m.momentum = mom
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's lr to ``swa_lr`` over ``anneal_epochs`` (cos or linear), then hold."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError("anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, "
                          "please use `get_last_lr()`.", UserWarning, stacklevel=2)
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        span = max(1, self.anneal_epochs)
        groups = self.optimizer.param_groups
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / span)))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha) for g in groups]
        alpha = self.anneal_func(max(0, min(1, step / span)))
        return [g["swa_lr"] * alpha + lr * (1 - alpha) for g, lr in zip(groups, prev)]

    def _set_anneal_func(self, anneal_strategy):
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self):
        """Attributes except the optimizer and the anneal function."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        """Restore attributes and the anneal function."""
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
