"""Scientific and numerical research scripts, run unchanged under the framework and PyTorch.

Each ``run(torch, ...)`` body is plain PyTorch code in the idioms of research repositories
(PINNs, neural ODEs, Fourier neural operators, clustering and EM, optimal transport, Kalman
filters, signal processing, numerical linear algebra, Monte Carlo); ``compare`` runs it under
both libraries from the same NumPy data and weights and checks that the results agree.
"""
import io
import math

import numpy as np
import pytest

from script_harness import compare, data, init_params


# --------------------------------------------------------------------------------------
# 1. Physics-informed neural network (Burgers' equation), Adam then L-BFGS
# --------------------------------------------------------------------------------------
def pinn(torch, adam_steps=3, lbfgs_iters=4):
    nn = torch.nn
    F = torch.nn.functional

    class PINN(nn.Module):
        def __init__(self, width=16):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(2, width), nn.Tanh(),
                                     nn.Linear(width, width), nn.Tanh(),
                                     nn.Linear(width, 1))

        def forward(self, x, t):
            return self.net(torch.cat([x, t], dim=1))

    model = init_params(torch, PINN(), seed=1)
    nu = 0.01 / math.pi
    # collocation points in the interior
    x = (data(torch, 1, 24, 1, kind="uniform") * 2 - 1).requires_grad_(True)
    t = data(torch, 2, 24, 1, kind="uniform").requires_grad_(True)
    # boundary x = +-1 and initial condition u(x, 0) = -sin(pi x)
    x_b = torch.cat([-torch.ones(6, 1), torch.ones(6, 1)], dim=0)
    t_b = data(torch, 3, 12, 1, kind="uniform")
    x_0 = torch.linspace(-1, 1, 10).unsqueeze(1)
    t_0 = torch.zeros_like(x_0)
    u_0 = -torch.sin(math.pi * x_0)

    def residual():
        u = model(x, t)
        u_x = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_t = torch.autograd.grad(u, t, grad_outputs=torch.ones_like(u), create_graph=True)[0]
        u_xx = torch.autograd.grad(u_x, x, grad_outputs=torch.ones_like(u_x),
                                   create_graph=True)[0]
        return u_t + u * u_x - nu * u_xx

    def total_loss():
        loss_pde = torch.mean(residual() ** 2)
        loss_bc = model(x_b, t_b).pow(2).mean()
        loss_ic = F.mse_loss(model(x_0, t_0), u_0)
        return loss_pde + loss_bc + loss_ic

    losses = []
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(adam_steps):
        opt.zero_grad()
        loss = total_loss()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    lbfgs = torch.optim.LBFGS(model.parameters(), lr=1.0, max_iter=lbfgs_iters,
                              history_size=5, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        loss = total_loss()
        loss.backward()
        return loss

    for _ in range(2):
        losses.append(lbfgs.step(closure).item())
    final = total_loss().item()
    return {"losses": losses, "final": final, "improved": final < losses[0],
            "state": {k: v.detach().clone() for k, v in model.state_dict().items()}}


def test_pinn_burgers_adam_then_lbfgs():
    compare(pinn, rtol=2e-3, atol=2e-4)


# --------------------------------------------------------------------------------------
# 2. Neural ODE with hand-written fixed-step solvers; trapezoid quadrature
# --------------------------------------------------------------------------------------
def neural_ode(torch, steps=8):
    nn = torch.nn

    class ODEFunc(nn.Module):
        def __init__(self, dim=3, hidden=12):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(dim, hidden), nn.Tanh(), nn.Linear(hidden, dim))

        def forward(self, t, y):
            return self.net(y) * torch.cos(t)

    def euler(f, y0, ts):
        ys = [y0]
        y = y0
        for i in range(len(ts) - 1):
            dt = ts[i + 1] - ts[i]
            y = y + dt * f(ts[i], y)
            ys.append(y)
        return torch.stack(ys)

    def rk4(f, y0, ts):
        ys = [y0]
        y = y0
        for t0, t1 in zip(ts[:-1], ts[1:]):
            h = t1 - t0
            k1 = f(t0, y)
            k2 = f(t0 + h / 2, y + h * k1 / 2)
            k3 = f(t0 + h / 2, y + h * k2 / 2)
            k4 = f(t1, y + h * k3)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            ys.append(y)
        return torch.stack(ys, dim=0)

    func = init_params(torch, ODEFunc(), seed=2)
    y0 = data(torch, 5, 4, 3)
    ts = torch.linspace(0.0, 2.0, steps + 1)
    target = data(torch, 6, steps + 1, 4, 3) * 0.1

    opt = torch.optim.SGD(func.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        traj = rk4(func, y0, ts)
        loss = (traj - target).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    with torch.no_grad():
        traj_rk4 = rk4(func, y0, ts)
        traj_euler = euler(func, y0, ts)
    # gradient of the final state w.r.t. the initial condition (adjoint-free backprop)
    y0g = y0.clone().requires_grad_(True)
    rk4(func, y0g, ts)[-1].sum().backward()
    # quadrature along the time grid
    norms = traj_rk4.norm(dim=-1)                     # (T, B)
    area = torch.trapezoid(norms, ts, dim=0)
    running = torch.cumulative_trapezoid(norms, x=ts, dim=0)
    area_dx = torch.trapezoid(norms.T, dx=float(ts[1] - ts[0]))
    return {"losses": losses, "rk4": traj_rk4, "euler": traj_euler, "dy0": y0g.grad,
            "area": area, "running": running, "area_dx": area_dx,
            "gap": (traj_rk4 - traj_euler).abs().max().item()}


def test_neural_ode_rk4_euler_trapezoid():
    compare(neural_ode, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------
# 3. Fourier neural operator: 2-D and 1-D spectral convolutions with complex weights
# --------------------------------------------------------------------------------------
def fno(torch, modes=3, width=4, size=8):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(7)

    class SpectralConv2d(nn.Module):
        def __init__(self, in_c, out_c, m1, m2):
            super().__init__()
            self.out_c, self.m1, self.m2 = out_c, m1, m2
            scale = 1 / (in_c * out_c)
            self.weights1 = nn.Parameter(scale * torch.rand(in_c, out_c, m1, m2,
                                                            dtype=torch.cfloat))
            self.weights2 = nn.Parameter(scale * torch.rand(in_c, out_c, m1, m2,
                                                            dtype=torch.cfloat))

        def compl_mul2d(self, inp, weights):
            return torch.einsum("bixy,ioxy->boxy", inp, weights)

        def forward(self, x):
            B, _, H, W = x.shape
            x_ft = torch.fft.rfft2(x)
            out_ft = torch.zeros(B, self.out_c, H, W // 2 + 1, dtype=torch.cfloat,
                                 device=x.device)
            out_ft[:, :, :self.m1, :self.m2] = \
                self.compl_mul2d(x_ft[:, :, :self.m1, :self.m2], self.weights1)
            out_ft[:, :, -self.m1:, :self.m2] = \
                self.compl_mul2d(x_ft[:, :, -self.m1:, :self.m2], self.weights2)
            return torch.fft.irfft2(out_ft, s=(H, W))

    class SpectralConv1d(nn.Module):
        def __init__(self, in_c, out_c, m):
            super().__init__()
            self.out_c, self.m = out_c, m
            self.weights = nn.Parameter(torch.randn(in_c, out_c, m, dtype=torch.cfloat))

        def forward(self, x):
            n = x.size(-1)
            x_ft = torch.fft.rfft(x)
            out_ft = torch.zeros(x.size(0), self.out_c, n // 2 + 1, dtype=torch.cfloat)
            out_ft[:, :, :self.m] = torch.einsum("bix,iox->box", x_ft[:, :, :self.m],
                                                 self.weights)
            return torch.fft.irfft(out_ft, n=n)

    class FNO2d(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc0 = nn.Linear(3, width)
            self.conv0 = SpectralConv2d(width, width, modes, modes)
            self.w0 = nn.Conv2d(width, width, 1)
            self.conv1 = SpectralConv2d(width, width, modes, modes)
            self.w1 = nn.Conv2d(width, width, 1)
            self.fc1 = nn.Linear(width, 1)

        def forward(self, a):
            B, H, W, _ = a.shape
            gx = torch.linspace(0, 1, H).reshape(1, H, 1, 1).repeat(B, 1, W, 1)
            gy = torch.linspace(0, 1, W).reshape(1, 1, W, 1).repeat(B, H, 1, 1)
            x = self.fc0(torch.cat((a, gx, gy), dim=-1)).permute(0, 3, 1, 2)
            x = F.gelu(self.conv0(x) + self.w0(x))
            x = self.conv1(x) + self.w1(x)
            return self.fc1(x.permute(0, 2, 3, 1))

    def from_numpy(module):
        """Every parameter from NumPy, the complex ones as complex numbers."""
        with torch.no_grad():
            for p in module.parameters():
                shape = tuple(p.shape)
                if p.is_complex():
                    z = (rng.random(shape) + 1j * rng.random(shape)) / shape[0]
                    p.copy_(torch.tensor(z, dtype=torch.cfloat))
                else:
                    p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, shape), dtype=p.dtype))
        return module

    model = FNO2d()
    # the random complex init, by its statistics: U[0, 1) parts times 1 / (in_c * out_c)
    w = model.conv0.weights1.detach()
    init_stats = [w.dtype == torch.cfloat, bool(w.real.min() >= 0), bool(w.imag.min() >= 0),
                  bool(w.real.max() < 1 / width ** 2), bool(w.imag.max() < 1 / width ** 2),
                  bool(w.imag.max() > 0.5 / width ** 2)]
    from_numpy(model)
    a = data(torch, 9, 2, size, size, 1)
    u = data(torch, 10, 2, size, size, 1) * 0.1
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses, grads = [], {}
    for step in range(2):
        opt.zero_grad()
        loss = F.mse_loss(model(a), u)
        loss.backward()
        if step == 0:
            grads = {k: p.grad.clone() for k, p in model.named_parameters()}
        opt.step()
        losses.append(loss.item())

    # a checkpoint round trip keeps the complex weights
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    model2 = FNO2d()
    model2.load_state_dict(torch.load(buf))
    reloaded = model2(a)

    conv1d = SpectralConv1d(2, 3, 4)
    z = conv1d.weights.detach()
    init_stats.append(bool(z.real.std() > 0.2) and bool(z.imag.std() > 0.2))
    from_numpy(conv1d)
    x1 = data(torch, 11, 2, 2, 10).requires_grad_(True)
    y1 = conv1d(x1)
    y1.pow(2).sum().backward()
    return {"losses": losses, "grads": grads, "w1": model.conv0.weights1.detach(),
            "init": init_stats, "reloaded": reloaded,
            "y1": y1, "dx1": x1.grad, "dw1d": conv1d.weights.grad,
            "cfloat": model.conv0.weights1.dtype == torch.cfloat,
            "grad_cfloat": conv1d.weights.grad.dtype == torch.complex64}


def test_fourier_neural_operator_2d_and_1d():
    compare(fno, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------
# 4. k-means (Lloyd) and one Gaussian-mixture EM step
# --------------------------------------------------------------------------------------
def kmeans_gmm(torch, device="cpu", k=3, iters=4):
    X = torch.cat([data(torch, 12, 10, 2) + 3, data(torch, 13, 10, 2) - 3,
                   data(torch, 14, 8, 2) * 0.5]).to(device)
    n, d = X.shape
    # the third initial centroid is far away, so its cluster starts empty
    centroids = torch.tensor([[3.0, 3.0], [-3.0, -3.0], [50.0, 50.0]], device=device)
    history = []
    for _ in range(iters):
        dist = torch.cdist(X, centroids)
        labels = dist.argmin(dim=1)
        counts = torch.bincount(labels, minlength=k)
        sums = torch.zeros(k, d, device=device).scatter_add_(
            0, labels.unsqueeze(1).expand(-1, d), X)
        sums2 = torch.zeros_like(sums).index_add_(0, labels, X)
        new = sums / counts.clamp(min=1).unsqueeze(1).to(X.dtype)
        # an empty cluster is re-seeded at the point farthest from its centroid
        far = X[dist.min(dim=1).values.argmax()]
        new = torch.where((counts == 0).unsqueeze(1), far.expand(k, d), new)
        history.append((counts.clone(), (sums - sums2).abs().max()))
        centroids = new
    inertia = (X - centroids[labels]).pow(2).sum()

    # Gaussian mixture: one EM step from the k-means solution
    D = torch.distributions
    means = centroids.clone()
    covs = torch.eye(d, device=device).expand(k, d, d).clone()
    weights = torch.full((k,), 1.0 / k, device=device)
    mvn = D.MultivariateNormal(means, covariance_matrix=covs)
    log_p = mvn.log_prob(X.unsqueeze(1)) + torch.log(weights)        # (n, k)
    log_norm = torch.logsumexp(log_p, dim=1, keepdim=True)
    resp = (log_p - log_norm).exp()
    nk = resp.sum(0) + 1e-10
    means = torch.einsum("nk,nd->kd", resp, X) / nk[:, None]
    diff = X.unsqueeze(1) - means.unsqueeze(0)                          # (n, k, d)
    covs = torch.einsum("nk,nkd,nke->kde", resp, diff, diff) / nk[:, None, None]
    covs = covs + 1e-6 * torch.eye(d, device=device)
    # the (n, k) x (n, d) x (n, e) contraction of the brief: second moments per cluster
    second = torch.einsum("nk,nd,ne->kde", resp, X, X) / nk[:, None, None]
    weights = nk / n
    ll = D.MultivariateNormal(means, covariance_matrix=covs).log_prob(X[:, None]) \
        + weights.log()
    return {"history": history, "labels": labels, "centroids": centroids,
            "inertia": inertia, "loglik": log_norm.sum(), "resp": resp, "means": means,
            "covs": covs, "second": second, "weights": weights,
            "new_loglik": torch.logsumexp(ll, dim=1).sum()}


def test_kmeans_and_gmm_em(device):
    def run(torch):  # the framework side moves to ``device``, PyTorch stays on the cpu
        return kmeans_gmm(torch, device=device if torch.__name__ == "framework" else "cpu")
    compare(run, rtol=1e-4, atol=1e-5)


# --------------------------------------------------------------------------------------
# 5. Log-domain Sinkhorn and a batched Kalman filter
# --------------------------------------------------------------------------------------
def sinkhorn_kalman(torch, iters=20, eps=0.5):
    x = data(torch, 15, 7, 2).requires_grad_(True)
    y = data(torch, 16, 9, 2) + 1.0
    a = torch.full((7,), 1.0 / 7)
    b = torch.full((9,), 1.0 / 9)
    C = torch.cdist(x, y, p=2) ** 2

    def M(u, v):
        return (-C + u.unsqueeze(1) + v.unsqueeze(0)) / eps

    u = torch.zeros_like(a)
    v = torch.zeros_like(b)
    for _ in range(iters):
        u = eps * (torch.log(a) - torch.logsumexp(M(u, v), dim=-1)) + u
        v = eps * (torch.log(b) - torch.logsumexp(M(u, v).transpose(-2, -1), dim=-1)) + v
    pi = torch.exp(M(u, v))
    cost = torch.sum(pi * C)
    cost.backward()

    # Kalman filter: B independent constant-velocity trackers
    B, n, m, T = 3, 4, 2, 5
    dt = 0.1
    Fm = torch.eye(n)
    Fm[0, 2] = dt
    Fm[1, 3] = dt
    Hm = torch.zeros(m, n)
    Hm[0, 0] = 1.0
    Hm[1, 1] = 1.0
    Q = 0.01 * torch.eye(n).expand(B, n, n)
    R = 0.1 * torch.eye(m).expand(B, m, m)
    zs = data(torch, 17, T, B, m, dtype=torch.float64)
    xk = torch.zeros(B, n, 1, dtype=torch.float64)
    P = torch.eye(n, dtype=torch.float64).expand(B, n, n).clone()
    Fm, Hm, Q, R = Fm.double(), Hm.double(), Q.double(), R.double()
    I = torch.eye(n, dtype=torch.float64).expand(B, n, n)
    loglik = torch.zeros(B, dtype=torch.float64)
    states, slog = [], []
    for k in range(T):
        xk = Fm @ xk
        P = Fm @ P @ Fm.T + Q
        innov = zs[k].unsqueeze(-1) - Hm @ xk
        S = Hm @ P @ Hm.T + R
        K = P @ Hm.T @ torch.linalg.inv(S)
        K_solve = torch.linalg.solve(S, Hm @ P.mT).mT      # the same gain, without inv
        xk = xk + K @ innov
        P = (I - K @ Hm) @ P
        sign, logabsdet = torch.linalg.slogdet(S)
        maha = (innov.mT @ torch.linalg.solve(S, innov)).squeeze(-1).squeeze(-1)
        loglik = loglik - 0.5 * (maha + torch.logdet(S) + m * math.log(2 * math.pi))
        states.append(xk.squeeze(-1))
        slog.append((sign, logabsdet, (K - K_solve).abs().max()))
    return {"u": u, "v": v, "plan": pi, "cost": cost, "dx": x.grad,
            "marg_a": pi.sum(1), "states": torch.stack(states), "P": P,
            "loglik": loglik, "slog": slog}


def test_sinkhorn_and_kalman_filter():
    compare(sinkhorn_kalman, rtol=1e-4, atol=1e-6)


# --------------------------------------------------------------------------------------
# 6. Signal processing: STFT round trip, mel filterbank, FIR filtering, spectra
# --------------------------------------------------------------------------------------
def signal_processing(torch, n_fft=16, hop=4):
    F = torch.nn.functional
    sr = 64
    t = torch.arange(96, dtype=torch.float32) / sr
    x = torch.sin(2 * math.pi * 5 * t) + 0.5 * torch.sin(2 * math.pi * 17 * t) \
        + 0.1 * data(torch, 18, 96)
    xb = torch.stack([x, x.flip(0)])                                     # (2, L)
    window = torch.hann_window(n_fft)
    spec = torch.stft(xb, n_fft=n_fft, hop_length=hop, win_length=n_fft, window=window,
                      center=True, pad_mode="reflect", return_complex=True)
    mag, phase = spec.abs(), spec.angle()
    power = mag ** 2
    recon = torch.istft(spec, n_fft=n_fft, hop_length=hop, win_length=n_fft, window=window,
                        center=True, length=xb.shape[-1])
    # triangular mel-style filterbank as a matmul over frequency bins
    freqs = torch.fft.rfftfreq(n_fft, d=1.0 / sr)
    edges = torch.linspace(0, sr / 2, 6)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    fb = torch.clamp(torch.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), min=0)
    mel = torch.matmul(fb, power)                                       # (2, 4, frames)
    log_mel = torch.log(mel + 1e-6)
    # FIR low-pass: windowed sinc, reflect-padded conv1d
    taps = 9
    k = torch.arange(taps, dtype=torch.float32) - (taps - 1) / 2
    h = torch.sinc(0.25 * k) * torch.hamming_window(taps, periodic=False)
    h = h / h.sum()
    xp = F.pad(xb.unsqueeze(1), (taps // 2, taps // 2), mode="reflect")
    filtered = F.conv1d(xp, h.flip(0).view(1, 1, -1)).squeeze(1)
    # spectra
    X = torch.fft.fft(xb, dim=-1)
    f = torch.fft.fftshift(torch.fft.fftfreq(xb.shape[-1], d=1.0 / sr))
    centered = torch.fft.fftshift(X.abs(), dim=-1)
    half = torch.fft.rfft(filtered)
    back = torch.fft.irfft(half, n=filtered.shape[-1])
    kaiser = torch.kaiser_window(12, periodic=True, beta=8.0)
    hamming = torch.hamming_window(12)
    peak = freqs[power.mean(dim=(0, 2)).argmax()]
    return {"spec": spec, "mag": mag, "phase_cos": torch.cos(phase), "recon": recon,
            "roundtrip_err": (recon - xb).abs().max(), "log_mel": log_mel,
            "filtered": filtered, "X": X, "f": f, "centered": centered, "back": back,
            "kaiser": kaiser, "hamming": hamming, "peak": peak.item()}


def test_signal_processing_stft_filters_spectra():
    compare(signal_processing, rtol=1e-4, atol=2e-5)


# --------------------------------------------------------------------------------------
# 7. Numerical linear algebra idioms
# --------------------------------------------------------------------------------------
def linear_algebra(torch, n=12):
    F = torch.nn.functional
    # sparse SPD matrix: 1-D Laplacian plus a diagonal shift
    rows, cols, vals = [], [], []
    for i in range(n):
        rows.append(i); cols.append(i); vals.append(2.5)
        if i + 1 < n:
            rows += [i, i + 1]; cols += [i + 1, i]; vals += [-1.0, -1.0]
    indices = torch.tensor([rows, cols])
    A = torch.sparse_coo_tensor(indices, torch.tensor(vals, dtype=torch.float64),
                                (n, n)).coalesce()
    b = data(torch, 19, n, 1, dtype=torch.float64)

    # conjugate gradient
    x = torch.zeros(n, 1, dtype=torch.float64)
    r = b - torch.sparse.mm(A, x)
    p = r.clone()
    rs = (r * r).sum()
    residuals = []
    for _ in range(n):
        Ap = A @ p
        alpha = rs / (p * Ap).sum()
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = (r * r).sum()
        residuals.append(rs_new.sqrt().item())
        if rs_new.sqrt() < 1e-10:
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    Ad = A.to_dense()
    # the same operator from its diagonals, and a CSR mat-vec
    bands = torch.tensor([[-1.0] * n, [2.5] * n, [-1.0] * n], dtype=torch.float64)
    A_dia = torch.sparse.spdiags(bands, torch.tensor([-1, 0, 1]), (n, n))
    A_csr = torch.sparse.spdiags(bands, torch.tensor([-1, 0, 1]), (n, n),
                                 layout=torch.sparse_csr)

    # power iteration vs eigh
    v = F.normalize(data(torch, 20, n, dtype=torch.float64), dim=0)
    for _ in range(50):
        v = F.normalize(torch.sparse.mm(A, v.unsqueeze(1)).squeeze(1), dim=0)
    lam_power = v @ (Ad @ v)
    evals, evecs = torch.linalg.eigh(Ad)
    top = evecs[:, -1] * torch.sign(evecs[0, -1])

    # low-rank SVD approximation, least squares, QR, norms, pinv
    M = data(torch, 21, 8, 6, dtype=torch.float64)
    U, S, Vh = torch.linalg.svd(M, full_matrices=False)
    k = 3
    M_k = U[:, :k] @ torch.diag(S[:k]) @ Vh[:k]
    err_k = torch.linalg.matrix_norm(M - M_k)          # equals the tail singular values
    tail = S[k:].pow(2).sum().sqrt()
    B = data(torch, 22, 8, 2, dtype=torch.float64)
    sol = torch.linalg.lstsq(M, B).solution
    Q, R = torch.linalg.qr(M)
    norms = (torch.linalg.matrix_norm(M, ord="fro"), torch.linalg.matrix_norm(M, ord=2),
             torch.linalg.matrix_norm(M, ord="nuc"), torch.linalg.vector_norm(M, ord=3),
             torch.linalg.vector_norm(M, ord=float("inf"), dim=0))
    pinv = torch.linalg.pinv(M)

    # classical Gram-Schmidt
    basis = []
    for j in range(M.shape[1]):
        w = M[:, j].clone()
        for q in basis:
            w -= (q @ M[:, j]) * q
        basis.append(w / torch.linalg.vector_norm(w))
    Qgs = torch.stack(basis, dim=1)
    sign = torch.sign(torch.diagonal(R))

    # gradient through the top eigenvalue of a symmetric matrix
    W = data(torch, 23, 5, 5, dtype=torch.float64).requires_grad_(True)
    sym = (W + W.T) / 2
    top_eig = torch.linalg.eigh(sym).eigenvalues[-1]
    top_eig.backward()
    return {"cg_x": x, "cg_check": Ad @ x - b, "residuals_len": len(residuals),
            "lam_power": lam_power, "evals": evals, "top": top, "S": S, "M_k": M_k,
            "err_k": err_k, "tail": tail, "sol": sol, "Q": Q * sign, "R": R * sign[:, None],
            "Qgs": Qgs, "norms": norms, "pinv": pinv, "dW": W.grad,
            "nnz": A._nnz(), "is_sparse": A.is_sparse, "dia": A_dia.to_dense(),
            "dia_nnz": A_dia._nnz(), "csr_mv": A_csr @ x.squeeze(1),
            "csr_crow": A_csr.crow_indices()}


@pytest.mark.filterwarnings("ignore:Sparse invariant checks")  # PyTorch's, not ours
def test_linear_algebra_cg_eigh_svd_lstsq():
    compare(linear_algebra, rtol=1e-6, atol=1e-8)


# --------------------------------------------------------------------------------------
# 8. Monte Carlo and numerics: Sobol sequences, special functions, histograms, gradients
# --------------------------------------------------------------------------------------
def monte_carlo(torch):
    sobol = torch.quasirandom.SobolEngine(dimension=3, scramble=False)
    pts = sobol.draw(64)
    more = sobol.draw(8, dtype=torch.float64)
    # integral of x*y*z over the unit cube (1/8) and a Gaussian expectation via icdf
    est_cube = pts.prod(dim=1).mean()
    N = torch.distributions.Normal(0.0, 1.0)
    z = N.icdf(pts[1:, 0].clamp(1e-6, 1 - 1e-6))
    est_sq = (z ** 2).mean()
    cdf = N.cdf(torch.linspace(-3, 3, 13))
    u = torch.linspace(0.05, 0.95, 10, dtype=torch.float64)
    sp = torch.special
    special = {
        "erf": sp.erf(u), "erfinv": sp.erfinv(2 * u - 1), "gammaln": sp.gammaln(u * 10),
        "xlogy": sp.xlogy(u, u), "xlogy0": sp.xlogy(torch.zeros(3), torch.zeros(3)),
        "i0": sp.i0(u * 5), "logit": sp.logit(u), "expit": sp.expit(u * 4 - 2),
        "logit_eps": sp.logit(torch.tensor([0.0, 1.0]), eps=1e-6),
    }
    samples = data(torch, 24, 200)
    hist = torch.histc(samples, bins=8, min=-2, max=2)
    bounds = torch.linspace(-2, 2, 9)
    bucket = torch.bucketize(samples[:20], bounds)
    bucket_r = torch.bucketize(samples[:20], bounds, right=True)
    sorted_s = samples.sort().values
    ss = torch.searchsorted(sorted_s, torch.tensor([-1.0, 0.0, 0.5, 3.0]))
    ss_right = torch.searchsorted(sorted_s, sorted_s[:5], side="right")
    ecdf = ss.to(torch.float64) / samples.numel()
    xs = torch.linspace(0, math.pi, 33, dtype=torch.float64)
    ys = torch.sin(xs)
    cum = torch.cumsum(ys, dim=0) * (xs[1] - xs[0])
    dys = torch.diff(ys)
    dys2 = torch.diff(ys, n=2, prepend=ys[:1], append=ys[-1:])
    (g,) = torch.gradient(ys, spacing=(xs,))
    (g2,) = torch.gradient(ys, spacing=float(xs[1] - xs[0]), edge_order=2)
    gx, gy = torch.gradient(torch.outer(ys, ys[:5]))
    return {"pts": pts, "more": more, "est_cube": est_cube, "est_sq": est_sq, "cdf": cdf,
            "z": z, "special": special, "hist": hist, "bucket": bucket,
            "bucket_r": bucket_r, "ss": ss, "ss_right": ss_right, "ecdf": ecdf,
            "cum": cum, "dys": dys, "dys2": dys2, "g": g, "g2": g2, "gx": gx, "gy": gy}


def test_monte_carlo_sobol_special_histograms():
    compare(monte_carlo, rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------------------
# Regression: optimizers step a complex param as two real ones (the FNO's weights)
# --------------------------------------------------------------------------------------
def complex_param_steps(torch):
    names = ["Adam", "AdamW", "SGD", "RMSprop", "Adagrad", "NAdam", "RAdam", "Adamax",
             "Adadelta", "Rprop"]
    extra = {"SGD": {"momentum": 0.9}, "RMSprop": {"momentum": 0.9, "centered": True},
             "Adam": {"amsgrad": True}}
    out = {}
    for name in names:
        for foreach in (None, False):
            p = torch.nn.Parameter(torch.view_as_complex(data(torch, 30, 4, 2)))
            opt = getattr(torch.optim, name)([p], lr=0.1, foreach=foreach,
                                             **extra.get(name, {}))
            for seed in (31, 32):
                p.grad = torch.view_as_complex(data(torch, seed, 4, 2))
                opt.step()
            out[f"{name}-{foreach}"] = p.detach().clone()
    return out


def test_optimizers_step_complex_params_as_real_pairs():
    compare(complex_param_steps, rtol=1e-5, atol=1e-6)


def test_complex_checkpoints_load_in_either_library():
    torch = pytest.importorskip("torch")
    import framework
    z = np.array([[1 + 2j, 3 - 4j], [0.5j, -1.0]])
    buf = io.BytesIO()
    framework.save({"w": framework.tensor(z, dtype=framework.cfloat),
                    "d": framework.tensor(z)}, buf)
    buf.seek(0)
    got = torch.load(buf, weights_only=True)
    assert got["w"].dtype == torch.complex64 and got["d"].dtype == torch.complex128
    np.testing.assert_array_equal(got["d"].numpy(), z)
    buf = io.BytesIO()
    torch.save({"w": torch.tensor(z, dtype=torch.cfloat), "dt": torch.cdouble}, buf)
    buf.seek(0)
    back = framework.load(buf, weights_only=True)
    assert back["w"].dtype == framework.complex64 and back["dt"] is framework.complex128
    np.testing.assert_allclose(back["w"].numpy(), z.astype(np.complex64))


def test_complex_random_factories_draw_each_part():
    """``torch.rand(..., dtype=torch.cfloat)`` (the FNO's init) and the other complex
    samplers: one draw per part; a normal part has variance std**2 / 2."""
    import framework as fw
    n = 20000
    u = fw.rand(n, dtype=fw.cfloat)
    z = fw.randn(n, dtype=fw.cdouble)
    w = fw.empty(n, dtype=fw.cfloat).normal_(3.0, 2.0)
    v = fw.empty(n, dtype=fw.cfloat).uniform_(2.0, 5.0)
    m = fw.normal(fw.full((n,), 1 + 1j, dtype=fw.cfloat), 2.0)
    assert (u.dtype, z.dtype, w.dtype, m.dtype) == (fw.complex64, fw.complex128,
                                                    fw.complex64, fw.complex64)
    for part in (u.real, u.imag):
        assert 0 <= part.min().item() and part.max().item() < 1
        assert abs(part.mean().item() - 0.5) < 0.02 and abs(part.var().item() - 1 / 12) < 0.01
    assert abs((z.abs() ** 2).mean().item() - 1) < 0.05
    for part, mean, std in ((z.real, 0, 0.5 ** 0.5), (z.imag, 0, 0.5 ** 0.5),
                            (w.real, 3, 2 ** 0.5), (w.imag, 3, 2 ** 0.5),
                            (m.real, 1, 2 ** 0.5), (m.imag, 1, 2 ** 0.5)):
        assert abs(part.mean().item() - mean) < 0.05 and abs(part.std().item() - std) < 0.05
    assert 2 <= v.imag.min().item() and v.imag.max().item() < 5 and v.real.min().item() >= 2
    assert abs(fw.corrcoef(fw.stack([z.real, z.imag]))[0, 1].item()) < 0.05
    with pytest.raises(RuntimeError, match="standard deviation to be non-complex"):
        fw.normal(fw.zeros(3), fw.ones(3, dtype=fw.cfloat))
