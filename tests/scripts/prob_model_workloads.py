"""The probabilistic-model workloads of test_script_rl_prob.py (a RealNVP flow, ELBO pieces,
GP regression with a mixture density network, an HMC step), each a plain PyTorch body
``run(torch, ...)`` run under the framework and under PyTorch."""
import math

import numpy as np
import pytest

from script_harness import data, init_params


# ---------------------------------------------------------------------------------------
# 4. RealNVP normalizing flow, and TransformedDistribution

def realnvp(torch, steps=3):
    nn = torch.nn
    D = torch.distributions

    class CouplingLayer(nn.Module):
        def __init__(self, mask, hidden=8):
            super().__init__()
            self.register_buffer("mask", mask)
            self.s_net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 2))
            self.t_net = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, 2))
            self.scale = nn.Parameter(torch.ones(1))

        def forward(self, x):  # data -> latent
            x_masked = x * self.mask
            s = self.scale * torch.tanh(self.s_net(x_masked)) * (1 - self.mask)
            t = self.t_net(x_masked) * (1 - self.mask)
            z = x_masked + (1 - self.mask) * (x * torch.exp(s) + t)
            log_det = s.sum(dim=1)
            return z, log_det

        def inverse(self, z):
            z_masked = z * self.mask
            s = self.scale * torch.tanh(self.s_net(z_masked)) * (1 - self.mask)
            t = self.t_net(z_masked) * (1 - self.mask)
            return z_masked + (1 - self.mask) * ((z - t) * torch.exp(-s))

    class RealNVP(nn.Module):
        def __init__(self, n_layers=4):
            super().__init__()
            masks = [torch.tensor([1.0, 0.0]) if i % 2 == 0 else torch.tensor([0.0, 1.0])
                     for i in range(n_layers)]
            self.layers = nn.ModuleList([CouplingLayer(m) for m in masks])
            self.base = D.MultivariateNormal(torch.zeros(2), torch.eye(2))

        def log_prob(self, x):
            log_det_total = torch.zeros(x.shape[0])
            for layer in self.layers:
                x, log_det = layer(x)
                log_det_total = log_det_total + log_det
            return self.base.log_prob(x) + log_det_total

        def inverse(self, z):
            for layer in reversed(self.layers):
                z = layer.inverse(z)
            return z

    flow = init_params(torch, RealNVP(), seed=5)
    opt = torch.optim.Adam(flow.parameters(), lr=1e-2)
    x = data(torch, 31, 16, 2) * torch.tensor([2.0, 0.5]) + 1.0
    losses = []
    for _ in range(steps):
        loss = -flow.log_prob(x).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    out = {"losses": losses, "state": dict(flow.state_dict()),
           "buffers": [n for n, _ in flow.named_buffers()] == [f"layers.{i}.mask"
                                                                 for i in range(4)]}
    with torch.no_grad():
        z = data(torch, 32, 5, 2)  # base samples, fed from NumPy
        x_gen = flow.inverse(z)
        out["gen"] = x_gen
        z_back = x_gen
        for layer in flow.layers:
            z_back, _ = layer(z_back)
        out["roundtrip"] = z_back - z

    # library transforms
    T = D.transforms
    v = data(torch, 33, 6, kind="uniform") * 3 + 0.1
    base = D.Normal(torch.tensor(0.5), torch.tensor(0.8))
    log_normal = D.TransformedDistribution(base, [T.ExpTransform()])
    logit_normal = D.TransformedDistribution(base, [T.SigmoidTransform()])
    chain = T.ComposeTransform([T.AffineTransform(loc=1.0, scale=2.0), T.ExpTransform()])
    shifted = D.TransformedDistribution(base, chain)
    out["lognormal"] = log_normal.log_prob(v)
    out["lognormal_ref"] = D.LogNormal(torch.tensor(0.5), torch.tensor(0.8)).log_prob(v)
    out["logit_normal"] = logit_normal.log_prob(v / 4)
    out["composed"] = shifted.log_prob(v)
    out["ladj"] = chain.log_abs_det_jacobian(v, chain(v))
    out["inv"] = chain.inv(chain(v))
    return out


# ---------------------------------------------------------------------------------------
# 5. ELBO pieces: KL to the prior, the reparameterisation, likelihoods of common families

def elbo(torch):
    nn = torch.nn
    F = torch.nn.functional
    D = torch.distributions

    class VAE(nn.Module):
        def __init__(self, x_dim=6, z_dim=2):
            super().__init__()
            self.enc = nn.Linear(x_dim, 2 * z_dim)
            self.dec = nn.Linear(z_dim, x_dim)

        def forward(self, x, eps):
            mu, log_var = self.enc(x).chunk(2, dim=-1)
            sigma = torch.exp(0.5 * log_var)
            q = D.Normal(mu, sigma)
            z = mu + sigma * eps  # q.rsample() with the noise fed from NumPy
            recon = D.Bernoulli(logits=self.dec(z)).log_prob(x).sum(-1)
            kl = D.kl_divergence(q, D.Normal(0, 1)).sum(-1)
            kl_closed = -0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp(), dim=-1)
            return -(recon - kl).mean(), kl, kl_closed

    vae = init_params(torch, VAE(), seed=6)
    opt = torch.optim.Adam(vae.parameters(), lr=1e-2)
    x = (data(torch, 41, 5, 6, kind="uniform") > 0.5).float()
    out = {"loss": []}
    for step in range(3):
        loss, kl, kl_closed = vae(x, data(torch, 42 + step, 5, 2))
        opt.zero_grad()
        loss.backward()
        opt.step()
        out["loss"].append(loss.item())
    out["kl"], out["kl_closed"] = kl, kl_closed
    out["grad"] = vae.enc.weight.grad

    # rsample is loc + scale * eps: d z/d loc = 1, d z/d scale = eps = (z - loc) / scale
    loc = data(torch, 45, 4).requires_grad_()
    scale = (data(torch, 46, 4, kind="uniform") + 0.5).requires_grad_()
    torch.manual_seed(0)
    z = D.Normal(loc, scale).rsample((3,))
    z.sum().backward()
    out["rsample"] = [tuple(z.shape), loc.grad,
                      scale.grad - ((z - loc) / scale).detach().sum(0)]

    p = data(torch, 47, 4, kind="uniform") * 0.8 + 0.1
    a = data(torch, 48, 4, kind="uniform") * 3 + 0.5
    b = data(torch, 49, 4, kind="uniform") * 3 + 0.5
    beta, gamma = D.Beta(a, b), D.Gamma(a, b)
    dirichlet = D.Dirichlet(a)
    simplex = p / p.sum()
    counts = torch.tensor([0.0, 1.0, 3.0, 7.0])
    onehot = D.OneHotCategorical(logits=data(torch, 50, 3, 4))
    relaxed = D.RelaxedBernoulli(torch.tensor(0.5), logits=data(torch, 51, 4))
    for name, d, v in [("beta", beta, p), ("gamma", gamma, a), ("dirichlet", dirichlet, simplex),
                       ("poisson", D.Poisson(a), counts), ("onehot", onehot, torch.eye(4)[:3]),
                       ("relaxed", relaxed, p)]:
        out[name] = d.log_prob(v)
    for name, d in [("beta", beta), ("gamma", gamma), ("dirichlet", dirichlet),
                    ("onehot", onehot)]:
        out[name + "_moments"] = [d.mean, d.variance]
    out["onehot_entropy"] = onehot.entropy()
    out["kl_beta"] = D.kl_divergence(beta, D.Beta(b, a))
    out["kl_gamma"] = D.kl_divergence(gamma, D.Gamma(b, a))
    out["kl_dirichlet"] = D.kl_divergence(dirichlet, D.Dirichlet(b))

    # a low-rank Gaussian posterior (a batch of 2) against a full-covariance prior and back
    W = data(torch, 52, 2, 3, 1).requires_grad_()
    d = (data(torch, 53, 2, 3, kind="uniform") + 0.5).requires_grad_()
    post = D.LowRankMultivariateNormal(data(torch, 54, 2, 3), W, d)
    a = data(torch, 55, 3, 3)
    prior = D.MultivariateNormal(torch.zeros(3), covariance_matrix=a @ a.T + torch.eye(3))
    other = D.LowRankMultivariateNormal(torch.ones(3), data(torch, 56, 3, 2), d.detach() + 1)
    kls = [D.kl_divergence(post, prior), D.kl_divergence(prior, post),
           D.kl_divergence(post, other)]
    out["kl_lowrank"] = kls + list(torch.autograd.grad(sum(k.sum() for k in kls), (W, d)))
    full = D.MultivariateNormal(post.loc, covariance_matrix=post.covariance_matrix)
    out["kl_lowrank_as_full"] = [D.kl_divergence(full, prior), D.kl_divergence(prior, full)]
    return out


def lowrank_kl_errors(torch):
    D = torch.distributions
    lowrank = D.LowRankMultivariateNormal(torch.zeros(2), torch.ones(2, 1), torch.ones(2))
    others = [D.MultivariateNormal(torch.zeros(3), torch.eye(3)),
              D.LowRankMultivariateNormal(torch.zeros(3), torch.ones(3, 1), torch.ones(3))]
    errors = []
    for p, q in [(lowrank, others[0]), (others[0], lowrank), (lowrank, others[1])]:
        with pytest.raises(ValueError) as info:
            D.kl_divergence(p, q)
        errors.append(str(info.value))
    return errors


# ---------------------------------------------------------------------------------------
# 6. Gaussian process regression, and a mixture density network

def gp_regression(torch, steps=3):
    nn = torch.nn
    F = torch.nn.functional
    D = torch.distributions

    class ExactGP(nn.Module):
        def __init__(self):
            super().__init__()
            self.raw_lengthscale = nn.Parameter(torch.tensor(0.0))
            self.raw_outputscale = nn.Parameter(torch.tensor(0.5))
            self.raw_noise = nn.Parameter(torch.tensor(-1.0))

        def kernel(self, x1, x2):
            ls = F.softplus(self.raw_lengthscale)
            sq = (x1.unsqueeze(1) - x2.unsqueeze(0)).pow(2).sum(-1)
            return F.softplus(self.raw_outputscale) * torch.exp(-0.5 * sq / ls ** 2)

        def nll(self, x, y):
            n = x.shape[0]
            K = self.kernel(x, x) + F.softplus(self.raw_noise) * torch.eye(n)
            L = torch.linalg.cholesky(K)
            alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
            lml = (-0.5 * (y.unsqueeze(-1) * alpha).sum() - torch.log(torch.diagonal(L)).sum()
                   - 0.5 * n * math.log(2 * math.pi))
            return -lml / n

        def predict(self, x, y, xs):
            K = self.kernel(x, x) + F.softplus(self.raw_noise) * torch.eye(x.shape[0])
            L = torch.linalg.cholesky(K)
            Ks = self.kernel(x, xs)
            v = torch.linalg.solve_triangular(L, Ks, upper=False)
            alpha = torch.cholesky_solve(y.unsqueeze(-1), L)
            mean = (Ks.T @ alpha).squeeze(-1)
            var = torch.diagonal(self.kernel(xs, xs)) - v.pow(2).sum(0)
            return mean, var

    x = data(torch, 61, 10, 1) * 2
    y = torch.sin(3 * x).squeeze(-1) + 0.1 * data(torch, 62, 10)
    gp = ExactGP()
    opt = torch.optim.Adam(gp.parameters(), lr=0.1)
    out = {"nll": []}
    for _ in range(steps):
        loss = gp.nll(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        out["nll"].append(loss.item())
    out["params"] = [p.detach().clone() for p in gp.parameters()]
    with torch.no_grad():
        xs = torch.linspace(-2, 2, 5).unsqueeze(-1)
        out["pred"] = gp.predict(x, y, xs)
        out["cdist_rbf"] = torch.exp(-0.5 * torch.cdist(x, xs).pow(2))
        out["diff_rbf"] = torch.exp(-0.5 * (x.unsqueeze(1) - xs.unsqueeze(0)).pow(2).sum(-1))

    # mixture density network
    class MDN(nn.Module):
        def __init__(self, n_components=3, hidden=8):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(1, hidden), nn.Tanh())
            self.logits = nn.Linear(hidden, n_components)
            self.mu = nn.Linear(hidden, n_components)
            self.log_sigma = nn.Linear(hidden, n_components)

        def forward(self, x):
            h = self.body(x)
            mix = D.Categorical(logits=self.logits(h))
            comp = D.Normal(self.mu(h), torch.exp(self.log_sigma(h)))
            return D.MixtureSameFamily(mix, comp)

    mdn = init_params(torch, MDN(), seed=7)
    opt = torch.optim.Adam(mdn.parameters(), lr=1e-2)
    out["mdn"] = []
    for _ in range(steps):
        dist = mdn(x)
        loss = -dist.log_prob(y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        out["mdn"].append(loss.item())
    out["mdn_moments"] = [dist.mean.detach(), dist.variance.detach()]
    out["mdn_state"] = dict(mdn.state_dict())
    return out


# ---------------------------------------------------------------------------------------
# 7. One Hamiltonian Monte Carlo transition

def hmc(torch, n_chains=3, n_steps=4, step_size=0.1):
    D = torch.distributions
    cov = torch.tensor([[1.0, 0.6], [0.6, 2.0]])
    target = D.MultivariateNormal(torch.tensor([0.5, -1.0]), covariance_matrix=cov)

    def potential(q):
        return -target.log_prob(q).sum()

    def grad_U(q):
        q = q.detach().requires_grad_(True)
        U = potential(q)
        return torch.autograd.grad(U, q)[0]

    rng = np.random.default_rng(71)
    q = torch.tensor(rng.standard_normal((n_chains, 2)), dtype=torch.float32)
    trace, accepts = [q.clone()], []
    for it in range(3):
        p0 = torch.tensor(rng.standard_normal((n_chains, 2)), dtype=torch.float32)
        q_new, p = q.clone(), p0.clone()
        p = p - 0.5 * step_size * grad_U(q_new)
        for i in range(n_steps):
            q_new = q_new + step_size * p
            if i != n_steps - 1:
                p = p - step_size * grad_U(q_new)
        p = p - 0.5 * step_size * grad_U(q_new)
        p = -p
        with torch.no_grad():
            current_H = -target.log_prob(q) + 0.5 * (p0 ** 2).sum(-1)
            proposed_H = -target.log_prob(q_new) + 0.5 * (p ** 2).sum(-1)
            log_u = torch.log(torch.tensor(rng.random(n_chains), dtype=torch.float32))
            accept = log_u < (current_H - proposed_H)
            q = torch.where(accept.unsqueeze(-1), q_new, q)
        accepts.append(accept)
        trace.append(q.clone())
    return {"trace": torch.stack(trace), "accept": torch.stack(accepts),
            "H_gap": current_H - proposed_H}
