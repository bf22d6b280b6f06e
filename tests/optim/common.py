"""Shared helpers for optimizer tests: run the same optimizer in framework and in torch on
a small set of parameters with fixed initial values and fixed per-step gradients, and
compare the parameter trajectories.

Typical use::

    fw_traj = run_trajectory(fw, lambda ps: fw.optim.Adam(ps, lr=0.1), 50, "float64", device)
    th_traj = run_trajectory(torch, lambda ps: torch.optim.Adam(ps, lr=0.1), 50, "float64", "cpu")
    assert_trajectories_close(fw_traj, th_traj, "float64")
"""
import numpy as np

SHAPES = ((5, 3), (3,), (2, 2, 2))


def initial_values(seed=0, shapes=SHAPES):
    """Fixed initial parameter values (float64 NumPy arrays)."""
    rng = np.random.RandomState(seed)
    return [rng.randn(*s) for s in shapes]


def gradients(step, seed=0, shapes=SHAPES):
    """Fixed gradients for step ``step`` (float64 NumPy arrays); some entries are 0."""
    rng = np.random.RandomState(1000 + 17 * seed + step)
    out = []
    for s in shapes:
        g = rng.randn(*s) * (1.0 + 0.5 * np.sin(step))
        g[rng.rand(*s) < 0.1] = 0.0
        out.append(g)
    return out


def to_numpy(t):
    """A framework or torch tensor as a float64 NumPy array."""
    return np.array(t.detach().cpu().numpy(), dtype=np.float64)


def make_params(T, values, dtype, device):
    """Leaf parameters of module ``T`` (framework or torch) holding ``values``."""
    dt = getattr(T, dtype)
    return [T.nn.Parameter(T.tensor(np.array(v), dtype=dt, device=device)) for v in values]


def run_trajectory(T, opt_factory, steps, dtype="float64", device="cpu", *, seed=0,
                   shapes=SHAPES, loss=None, on_step=None, resume_at=None,
                   sd_convert=None, zero_grad=True):
    """Run ``steps`` optimizer steps with module ``T`` (framework or torch).

    opt_factory(params) -> optimizer; params is the list of parameters (group them as you
    like). Gradients are the fixed ``gradients(k)`` cast to ``dtype``, unless ``loss`` is
    given: loss(T, params) -> scalar tensor, backpropagated each step (closure passed to
    step). on_step(opt, k) runs before step k (edit lr, ...). resume_at=k: after step k,
    take opt.state_dict(), build fresh parameters (same values) and a fresh optimizer,
    load the state dict (through sd_convert(sd) if given) and go on. Returns a list of
    length steps + 1 of lists of float64 arrays (parameter values before step 1, after
    step 1, ...)."""
    params = make_params(T, initial_values(seed, shapes), dtype, device)
    opt = opt_factory(params)
    dt = getattr(T, dtype)
    traj = [[to_numpy(p) for p in params]]
    for k in range(1, steps + 1):
        if on_step is not None:
            on_step(opt, k)
        if loss is None:
            for p, g in zip(params, gradients(k, seed, shapes)):
                p.grad = T.tensor(g, dtype=dt, device=device)
            opt.step()
        else:
            def closure():
                opt.zero_grad()
                out = loss(T, params)
                out.backward()
                return out
            opt.step(closure)
        if zero_grad:
            opt.zero_grad()
        traj.append([to_numpy(p) for p in params])
        if resume_at is not None and k == resume_at:
            sd = opt.state_dict()
            if sd_convert is not None:
                sd = sd_convert(sd)
            params = make_params(T, traj[-1], dtype, device)
            opt = opt_factory(params)
            opt.load_state_dict(sd)
    return traj


def tolerances(dtype):
    """(rtol, atol) for comparing trajectories in ``dtype``."""
    return (1e-6, 1e-9) if dtype == "float64" else (2e-4, 2e-5)


def assert_trajectories_close(a, b, dtype="float64", rtol=None, atol=None):
    """Assert two trajectories from run_trajectory agree step by step."""
    r, t = tolerances(dtype)
    rtol = r if rtol is None else rtol
    atol = t if atol is None else atol
    assert len(a) == len(b)
    for k, (pa, pb) in enumerate(zip(a, b)):
        for i, (x, y) in enumerate(zip(pa, pb)):
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol,
                                       err_msg=f"step {k}, parameter {i}")


def state_dict_to_numpy(sd):
    """A state dict with every tensor replaced by a NumPy array (deep copy)."""
    def conv(v):
        if hasattr(v, "detach") and hasattr(v, "numpy"):
            return np.array(v.detach().cpu().numpy())
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(conv(x) for x in v)
        return v
    return conv(sd)


def state_dict_from_numpy(T, sd):
    """Inverse of state_dict_to_numpy for module ``T``: arrays become tensors (cpu)."""
    def conv(v):
        if isinstance(v, np.ndarray):
            return T.tensor(v)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return type(v)(conv(x) for x in v)
        return v
    return conv(sd)
