"""framework.distributions against torch.distributions (the oracle): densities, moments,
entropies, CDFs, KL divergences, shapes, validation errors, transforms, sample statistics
and reparameterized gradients, on cpu and (simulated) cuda."""
import math

import numpy as np
import pytest

import framework as fw
import framework.distributions as D

torch = pytest.importorskip("torch")
TD = torch.distributions


@pytest.fixture(autouse=True)
def _torch_validates_args():
    """torch.compile and torch.export, run in-process by other tests of this worker, switch
    torch's distribution validation off for good (dynamo's TorchPatcher): the oracle needs
    it on, as it is by default."""
    TD.Distribution.set_default_validate_args(True)


def _np(t):
    return t.detach().cpu().numpy() if isinstance(t, torch.Tensor) else t.detach().to("cpu").numpy()


def _close(a, b, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(_np(a).astype(np.float64), _np(b).astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True)


class _Both:
    """Builds the same argument as a framework tensor on ``device`` and as a torch tensor."""

    def __init__(self, device):
        self.device = device

    def __call__(self, x, dtype=np.float64):
        a = np.ascontiguousarray(x, dtype=dtype)
        return fw.tensor(a, device=self.device), torch.tensor(a)


rng = np.random.default_rng(1)
_pos = rng.uniform(0.5, 3.0, size=(2, 3))
_real = rng.normal(size=(2, 3))
_unit = rng.uniform(0.1, 0.9, size=(2, 3))
_A = rng.normal(size=(2, 3, 3))
_cov = _A @ _A.transpose(0, 2, 1) + 3 * np.eye(3)
_simplex = rng.uniform(0.1, 1.0, size=(2, 4))
_simplex /= _simplex.sum(-1, keepdims=True)


def _cases():
    """(name, builder(mod, arg) -> distribution, value numpy array or None)."""
    P, R, U = _pos, _real, _unit
    return [
        ("Normal", lambda m, a: m.Normal(a(R), a(P)), R + 0.3),
        ("Uniform", lambda m, a: m.Uniform(a(R), a(R + P)), R + 0.5 * P),
        ("Laplace", lambda m, a: m.Laplace(a(R), a(P)), R - 0.4),
        ("Cauchy", lambda m, a: m.Cauchy(a(R), a(P)), R + 1.0),
        ("Exponential", lambda m, a: m.Exponential(a(P)), P * 0.7),
        ("LogNormal", lambda m, a: m.LogNormal(a(R), a(P * 0.5)), P),
        ("HalfNormal", lambda m, a: m.HalfNormal(a(P)), P * 0.5),
        ("HalfCauchy", lambda m, a: m.HalfCauchy(a(P)), P * 0.5),
        ("Gumbel", lambda m, a: m.Gumbel(a(R), a(P)), R + 0.7),
        ("Weibull", lambda m, a: m.Weibull(a(P), a(P[::-1] * 0.8)), P * 0.6),
        ("Pareto", lambda m, a: m.Pareto(a(P * 0.5), a(P[::-1] * 1.5)), P * 1.1),
        ("InverseGamma", lambda m, a: m.InverseGamma(a(P * 1.5), a(P[::-1])), P * 0.8),
        ("StudentT", lambda m, a: m.StudentT(a(P * 2), a(R), a(P)), R + 0.2),
        ("StudentT_df1", lambda m, a: m.StudentT(a([0.8, 1.5, 3.0])), np.array([0.1, -2.0, 0.4])),
        ("Gamma", lambda m, a: m.Gamma(a(P), a(P[::-1])), P * 0.9),
        ("Chi2", lambda m, a: m.Chi2(a(P * 2)), P),
        ("Beta", lambda m, a: m.Beta(a(P), a(P[::-1] + 0.2)), U),
        ("Dirichlet", lambda m, a: m.Dirichlet(a(_simplex * 5)), _simplex[::-1].copy()),
        ("Bernoulli", lambda m, a: m.Bernoulli(probs=a(U)), (U > 0.5) * 1.0),
        ("Bernoulli_logits", lambda m, a: m.Bernoulli(logits=a(R)), (R > 0) * 1.0),
        ("Geometric", lambda m, a: m.Geometric(probs=a(U)), np.floor(P)),
        ("Poisson", lambda m, a: m.Poisson(a(P * 3)), np.floor(P * 2)),
        ("Binomial", lambda m, a: m.Binomial(a(np.full((2, 3), 6.0)), probs=a(U)), np.floor(P * 2)),
        ("NegativeBinomial", lambda m, a: m.NegativeBinomial(a(P * 2), probs=a(U)), np.floor(P * 2)),
        ("NegativeBinomial_logits", lambda m, a: m.NegativeBinomial(a([0.5, 3.0, 7.0]),
                                                                   logits=a(R)),
         np.array([[0.0, 4.0, 1.0], [2.0, 0.0, 9.0]])),
        ("Binomial_logits", lambda m, a: m.Binomial(a([3.0, 8.0, 8.0]), logits=a(R)),
         np.array([[1.0, 8.0, 0.0], [3.0, 2.0, 5.0]])),
        ("Categorical", lambda m, a: m.Categorical(probs=a(_simplex)), np.array([[0.0, 3.0], [2.0, 1.0]])),
        ("Categorical_logits", lambda m, a: m.Categorical(logits=a(R)), np.array([2.0, 0.0])),
        ("OneHotCategorical", lambda m, a: m.OneHotCategorical(probs=a(_simplex)), np.eye(4)[[1, 3]]),
        ("Multinomial", lambda m, a: m.Multinomial(5, probs=a(_simplex)), np.array([[1.0, 2, 0, 2], [0, 0, 5, 0]])),
        ("MVN_cov", lambda m, a: m.MultivariateNormal(a(R), covariance_matrix=a(_cov)), R[::-1].copy()),
        ("MVN_prec", lambda m, a: m.MultivariateNormal(a(R[0]), precision_matrix=a(_cov)), R),
        ("MVN_tril", lambda m, a: m.MultivariateNormal(a(R), scale_tril=a(np.linalg.cholesky(_cov))), R * 2),
        ("LowRankMVN", lambda m, a: m.LowRankMultivariateNormal(
            a(R), a(_A[:, :, :2]), a(P)), R[::-1].copy()),
        ("LowRankMVN_bcast", lambda m, a: m.LowRankMultivariateNormal(
            a(R[0]), a(_A[:, :, :1]), a(P[1])), R),
        ("Independent", lambda m, a: m.Independent(m.Normal(a(R), a(P)), 1), R[::-1].copy()),
        ("Kumaraswamy", lambda m, a: m.Kumaraswamy(a(P), a(P[::-1] * 0.7)), U),
        ("LogisticNormal", lambda m, a: m.LogisticNormal(a(R), a(P)),
         _simplex[::-1].copy()),
        ("FisherSnedecor", lambda m, a: m.FisherSnedecor(a(P * 3), a(P[::-1] * 4)), P * 0.5),
        ("RelaxedBernoulli", lambda m, a: m.RelaxedBernoulli(a(0.7), probs=a(U)), U[::-1].copy()),
        ("LogitRelaxedBernoulli", lambda m, a: m.relaxed_bernoulli.LogitRelaxedBernoulli(
            a(1.3), logits=a(R)), R),
        ("RelaxedOneHotCategorical", lambda m, a: m.RelaxedOneHotCategorical(
            a(0.5), probs=a(_simplex)), _simplex[::-1].copy()),
        ("ExpRelaxedCategorical", lambda m, a: m.relaxed_categorical.ExpRelaxedCategorical(
            a(0.8), logits=a(R)), np.log(_simplex[:, :3] / _simplex[:, :3].sum(-1, keepdims=True))),
        ("MixtureSameFamily", lambda m, a: m.MixtureSameFamily(
            m.Categorical(probs=a(_simplex[:, :3])), m.Normal(a(R), a(P))), R[:, 0] + 0.2),
        ("Mixture_MVN", lambda m, a: m.MixtureSameFamily(
            m.Categorical(logits=a(R[0, :2])),
            m.MultivariateNormal(a(R[:, :3]), scale_tril=a(np.linalg.cholesky(_cov)))), R[0]),
        ("Transformed", lambda m, a: m.TransformedDistribution(
            m.Normal(a(R), a(P)), [m.transforms.AffineTransform(a(R), a(P)), m.transforms.ExpTransform()]), P),
    ]


CASES = {c[0]: c for c in _cases()}
_DEVICES = ["cpu"] + (["cuda"] if fw.cuda.is_available() else [])


def _on_devices(items, cuda_items, ids=str):
    """Every item on cpu; on cuda (the slow interpreter) only those in ``cuda_items``."""
    return [pytest.param(d, it, id=f"{d}-{ids(it)}") for d in _DEVICES for it in items
            if d == "cpu" or ids(it) in cuda_items]
_PROPS = ["mean", "variance", "stddev", "mode"]


def _build(name, device):
    _, builder, value = CASES[name]
    both = _Both(device)
    ours = builder(D, lambda x: both(x)[0])
    theirs = builder(TD, lambda x: both(x)[1])
    return ours, theirs, value


def _same_or_raise(f_ours, f_theirs, rtol=1e-6):
    try:
        expected = f_theirs()
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            f_ours()
        return None
    got = f_ours()
    assert tuple(got.shape) == tuple(expected.shape)
    _close(got, expected, rtol=rtol)
    return got


@pytest.mark.parametrize("device,name", _on_devices(list(CASES), {
    "Normal", "Gamma", "Categorical", "Bernoulli", "MVN_tril", "Binomial", "Transformed", "Dirichlet",
    "Weibull"}))
def test_matches_torch(device, name):
    ours, theirs, value = _build(name, device)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    v_ours, v_theirs = fw.tensor(value, device=device), torch.tensor(value)
    _close(ours.log_prob(v_ours), theirs.log_prob(v_theirs), rtol=1e-6)
    for prop in _PROPS:
        _same_or_raise(lambda: getattr(ours, prop), lambda: getattr(theirs, prop))
    _same_or_raise(ours.entropy, theirs.entropy, rtol=1e-5)
    _same_or_raise(lambda: ours.cdf(v_ours), lambda: theirs.cdf(v_theirs), rtol=1e-5)
    q = np.linspace(0.05, 0.95, int(np.prod(theirs.batch_shape))).reshape(tuple(theirs.batch_shape))
    _same_or_raise(lambda: ours.icdf(fw.tensor(q, device=device)), lambda: theirs.icdf(torch.tensor(q)))
    if theirs.has_enumerate_support:
        _same_or_raise(ours.enumerate_support, theirs.enumerate_support)
        _same_or_raise(lambda: ours.enumerate_support(False), lambda: theirs.enumerate_support(False))
    s = ours.sample((5,))
    assert tuple(s.shape) == (5,) + tuple(theirs.batch_shape) + tuple(theirs.event_shape)
    assert str(s.device).startswith(device)
    assert bool(ours.support.check(s).all())
    # expand adds batch dims without changing the scores
    new_batch = (4,) + tuple(theirs.batch_shape)
    e_ours, e_theirs = ours.expand(new_batch), theirs.expand(new_batch)
    assert tuple(e_ours.batch_shape) == tuple(e_theirs.batch_shape)
    assert type(e_ours).__name__ == type(e_theirs).__name__
    v_new = np.broadcast_to(value, new_batch + tuple(theirs.event_shape)) if name != "Categorical" \
        else np.broadcast_to(value[:, None], (2,) + new_batch)
    _close(e_ours.log_prob(fw.tensor(v_new.copy(), device=device)), e_theirs.log_prob(torch.tensor(v_new)))
    assert tuple(e_ours.sample((2,)).shape) == (2,) + new_batch + tuple(theirs.event_shape)
    assert repr(ours).split("(")[0] == repr(theirs).split("(")[0]


@pytest.mark.parametrize("device,name", _on_devices(["Normal", "Gamma", "Categorical", "Bernoulli"],
                                                    {"Normal"}))
def test_float32_and_scalar_params(device, name):
    d = D.Normal(0.0, 1.0)
    assert d.batch_shape == fw.Size([]) and d.loc.dtype == fw.float32
    _close(d.log_prob(fw.tensor(0.5, device="cpu")), TD.Normal(0.0, 1.0).log_prob(torch.tensor(0.5)))
    ours, theirs, value = _build(name, device)
    got = ours.log_prob(fw.tensor(value, device=device).to(fw.float32) if name not in ("Categorical",)
                        else fw.tensor(value, device=device))
    _close(got, theirs.log_prob(torch.tensor(value)), rtol=1e-4, atol=1e-5)


# ---- KL divergences ------------------------------------------------------------------------
def _kl_pairs():
    P, R, U = _pos, _real, _unit
    L = np.linalg.cholesky(_cov)
    return [
        ("Normal", "Normal", lambda m, a: (m.Normal(a(R), a(P)), m.Normal(a(R[::-1]), a(P[::-1])))),
        ("Bernoulli", "Bernoulli", lambda m, a: (m.Bernoulli(a(U)), m.Bernoulli(a(U[::-1])))),
        ("Beta", "Beta", lambda m, a: (m.Beta(a(P), a(P[::-1])), m.Beta(a(P + 1), a(P)))),
        ("Binomial", "Binomial", lambda m, a: (m.Binomial(a(np.full((2, 3), 6.0)), a(U)),
                                               m.Binomial(a([[6.0, 6, 6], [6, 6, 3]]), a(U[::-1])))),
        ("Categorical", "Categorical", lambda m, a: (m.Categorical(a(_simplex)), m.Categorical(a(_simplex[::-1])))),
        ("OneHot", "OneHot", lambda m, a: (m.OneHotCategorical(a(_simplex)), m.OneHotCategorical(a(_simplex[::-1])))),
        ("Dirichlet", "Dirichlet", lambda m, a: (m.Dirichlet(a(_simplex * 4)), m.Dirichlet(a(_simplex[::-1] * 3)))),
        ("Exponential", "Exponential", lambda m, a: (m.Exponential(a(P)), m.Exponential(a(P[::-1])))),
        ("Gamma", "Gamma", lambda m, a: (m.Gamma(a(P), a(P[::-1])), m.Gamma(a(P + 1), a(P)))),
        ("Geometric", "Geometric", lambda m, a: (m.Geometric(a(U)), m.Geometric(a(U[::-1])))),
        ("HalfNormal", "HalfNormal", lambda m, a: (m.HalfNormal(a(P)), m.HalfNormal(a(P[::-1])))),
        ("Laplace", "Laplace", lambda m, a: (m.Laplace(a(R), a(P)), m.Laplace(a(R[::-1]), a(P[::-1])))),
        ("MVN", "MVN", lambda m, a: (m.MultivariateNormal(a(R), covariance_matrix=a(_cov)),
                                     m.MultivariateNormal(a(R[0]), scale_tril=a(L[0] * 0.5)))),
        ("Poisson", "Poisson", lambda m, a: (m.Poisson(a(P)), m.Poisson(a(P[::-1])))),
        ("Uniform", "Uniform", lambda m, a: (m.Uniform(a(R), a(R + 1)), m.Uniform(a(R - 1), a(R + P)))),
        ("Cauchy", "Cauchy", lambda m, a: (m.Cauchy(a(R), a(P)), m.Cauchy(a(R[::-1]), a(P)))),
        ("LogNormal", "LogNormal", lambda m, a: (m.LogNormal(a(R), a(P)), m.LogNormal(a(R[::-1]), a(P)))),
        ("Independent", "Independent", lambda m, a: (m.Independent(m.Normal(a(R), a(P)), 1),
                                                     m.Independent(m.Normal(a(R[::-1]), a(P)), 1))),
        ("Bernoulli", "Poisson", lambda m, a: (m.Bernoulli(a(U)), m.Poisson(a(P)))),
        ("Beta", "Exponential", lambda m, a: (m.Beta(a(P), a(P[::-1])), m.Exponential(a(P)))),
        ("Beta", "Gamma", lambda m, a: (m.Beta(a(P), a(P[::-1])), m.Gamma(a(P), a(P[::-1])))),
        ("Beta", "Normal", lambda m, a: (m.Beta(a(P), a(P[::-1])), m.Normal(a(R), a(P)))),
        ("Beta", "Uniform", lambda m, a: (m.Beta(a(P), a(P[::-1])), m.Uniform(a(R - 2), a(R + 2)))),
        ("Exponential", "Gamma", lambda m, a: (m.Exponential(a(P)), m.Gamma(a(P), a(P[::-1])))),
        ("Exponential", "Normal", lambda m, a: (m.Exponential(a(P)), m.Normal(a(R), a(P)))),
        ("Gamma", "Exponential", lambda m, a: (m.Gamma(a(P), a(P[::-1])), m.Exponential(a(P)))),
        ("Gamma", "Normal", lambda m, a: (m.Gamma(a(P), a(P[::-1])), m.Normal(a(R), a(P)))),
        ("Laplace", "Normal", lambda m, a: (m.Laplace(a(R), a(P)), m.Normal(a(R[::-1]), a(P)))),
        ("Normal", "Laplace", lambda m, a: (m.Normal(a(R), a(P)), m.Laplace(a(R[::-1]), a(P)))),
        ("Uniform", "Normal", lambda m, a: (m.Uniform(a(R), a(R + 1)), m.Normal(a(R[::-1]), a(P)))),
        ("Uniform", "Exponential", lambda m, a: (m.Uniform(a(R), a(R + 1)), m.Exponential(a(P)))),
        ("Uniform", "Gamma", lambda m, a: (m.Uniform(a(np.abs(R)), a(np.abs(R) + 1)), m.Gamma(a(P), a(P)))),
        ("Normal", "Gamma", lambda m, a: (m.Normal(a(R), a(P)), m.Gamma(a(P), a(P)))),
        ("Laplace", "Uniform", lambda m, a: (m.Laplace(a(R), a(P)), m.Uniform(a(R), a(R + 1)))),
        ("Poisson", "Binomial", lambda m, a: (m.Poisson(a(P)), m.Binomial(a(np.full((2, 3), 6.0)), a(U)))),
        ("Gumbel", "Gumbel", lambda m, a: (m.Gumbel(a(R), a(P)), m.Gumbel(a(R[::-1]), a(P[::-1])))),
        ("Pareto", "Pareto", lambda m, a: (m.Pareto(a(P), a(P[::-1])), m.Pareto(a(P[::-1]), a(P)))),
        ("Exponential", "Gumbel", lambda m, a: (m.Exponential(a(P)), m.Gumbel(a(R), a(P)))),
        ("Normal", "Gumbel", lambda m, a: (m.Normal(a(R), a(P)), m.Gumbel(a(R[::-1]), a(P)))),
        ("Uniform", "Gumbel", lambda m, a: (m.Uniform(a(R), a(R + P)), m.Gumbel(a(R[::-1]), a(P)))),
    ]


def _kl_id(p):
    return f"{p[0]}-{p[1]}"


@pytest.mark.parametrize("device,pair", _on_devices(_kl_pairs(), {
    "Normal-Normal", "MVN-MVN", "Dirichlet-Dirichlet", "Bernoulli-Bernoulli", "Gamma-Normal",
    "Independent-Independent", "Categorical-Categorical"}, ids=_kl_id))
def test_kl_divergence(device, pair):
    both = _Both(device)
    p, q = pair[2](D, lambda x: both(x)[0])
    tp, tq = pair[2](TD, lambda x: both(x)[1])
    _close(D.kl_divergence(p, q), TD.kl_divergence(tp, tq), rtol=1e-6, atol=1e-10)


def test_kl_registry():
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p type "
                                                  "Normal and q type Categorical"):
        D.kl_divergence(D.Normal(0.0, 1.0), D.Categorical(fw.tensor([0.5, 0.5])))

    class MyNormal(D.Normal):
        pass

    # a subclass falls back to its parent's pair until it registers its own
    _close(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)),
           TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Normal(1.0, 2.0)))

    @D.register_kl(MyNormal, D.Normal)
    def _kl(p, q):
        return fw.zeros(())

    assert float(D.kl_divergence(MyNormal(0.0, 1.0), D.Normal(1.0, 2.0))) == 0.0
    with pytest.raises(ValueError, match="different event shapes"):
        D.kl_divergence(D.MultivariateNormal(fw.zeros(2), fw.eye(2)), D.MultivariateNormal(fw.zeros(3), fw.eye(3)))


# ---- validation ------------------------------------------------------------------------------
def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("build", [
    lambda m, t: m.Normal(t([0.0, 1.0]), t([1.0, -1.0])),
    lambda m, t: m.Gamma(t([1.0]), t([0.0])),
    lambda m, t: m.Bernoulli(probs=t([1.5])),
    lambda m, t: m.Bernoulli(probs=t([0.5]), logits=t([0.0])),
    lambda m, t: m.Categorical(probs=t(0.5)),
    lambda m, t: m.Categorical(probs=t([0.5, -0.1])),
    lambda m, t: m.Dirichlet(t(1.0)),
    lambda m, t: m.Uniform(t([1.0]), t([0.0])),
    lambda m, t: m.Geometric(probs=t([0.0, 0.5])),
    lambda m, t: m.Poisson(t([-1.0])),
    lambda m, t: m.Binomial(t([2.5]), t([0.5])),
    lambda m, t: m.Multinomial(t(3.0), t([0.5, 0.5])),
    lambda m, t: m.MultivariateNormal(t(0.0), t([[1.0]])),
    lambda m, t: m.MultivariateNormal(t([0.0]), t([[1.0]]), scale_tril=t([[1.0]])),
    lambda m, t: m.MultivariateNormal(t([0.0]), scale_tril=t([1.0])),
    lambda m, t: m.MultivariateNormal(t([0.0]), covariance_matrix=t([1.0])),
    lambda m, t: m.MultivariateNormal(t([0.0]), precision_matrix=t([1.0])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0]), covariance_matrix=t([[1.0, 2.0], [2.0, 1.0]])),
    lambda m, t: m.MultivariateNormal(t([0.0, 0.0]), scale_tril=t([[1.0, 0.0], [0.0, -1.0]])),
    lambda m, t: m.Independent(m.Normal(t([0.0]), t([1.0])), 2),
    lambda m, t: m.Normal(t([0.0, 1.0]), t([1.0, 1.0])).log_prob(t([[1.0, 2.0, 3.0]])),
    lambda m, t: m.Dirichlet(t([1.0, 1.0])).log_prob(t([[0.5, 0.5, 0.0]])),
    lambda m, t: m.Normal(t([0.0]), t([1.0])).log_prob(1.0),
    lambda m, t: m.Exponential(t([1.0])).log_prob(t([-1.0])),
    lambda m, t: m.Categorical(probs=t([0.5, 0.5])).log_prob(t(2)),
    lambda m, t: m.Dirichlet(t([1.0, 1.0])).log_prob(t([0.2, 0.2, 0.6])),
    lambda m, t: m.Binomial(t([3.0]), t([0.5])).log_prob(t([4.0])),
], ids=lambda f: "")
def test_validation_errors(build):
    got_type, got = _message(lambda: build(D, lambda x: fw.tensor(x)))
    exp_type, expected = _message(lambda: build(TD, lambda x: torch.tensor(x)))
    assert got_type is exp_type
    # the tensor printouts differ in their module name only
    assert got.replace("framework.", "torch.").split("invalid values")[0] == expected.split("invalid values")[0]


def test_validate_args_switch():
    D.Normal(fw.tensor(0.0), fw.tensor(-1.0), validate_args=False)
    D.Distribution.set_default_validate_args(False)
    try:
        d = D.Normal(fw.tensor(0.0), fw.tensor(-1.0))
        d.log_prob(fw.tensor([1.0, 2.0]))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(fw.tensor(0.0), fw.tensor(-1.0))
    with pytest.raises(ValueError):
        D.Distribution.set_default_validate_args(3)


# ---- constraints and transforms ----------------------------------------------------------------
def test_constraints():
    C, TC = D.constraints, TD.constraints
    x = np.array([[-1.0, 0.0, 0.5, 1.0, 2.0, np.nan], [3.0, 1.5, 0.0, -0.0, 1.0, 0.2]])
    pairs = [(C.real, TC.real), (C.positive, TC.positive), (C.nonnegative, TC.nonnegative),
             (C.unit_interval, TC.unit_interval), (C.boolean, TC.boolean),
             (C.nonnegative_integer, TC.nonnegative_integer), (C.positive_integer, TC.positive_integer),
             (C.integer_interval(0, 2), TC.integer_interval(0, 2)), (C.greater_than(0.5), TC.greater_than(0.5)),
             (C.greater_than_eq(0.5), TC.greater_than_eq(0.5)), (C.less_than(1.0), TC.less_than(1.0)),
             (C.interval(0.0, 1.5), TC.interval(0.0, 1.5)), (C.half_open_interval(0, 1), TC.half_open_interval(0, 1)),
             (C.real_vector, TC.real_vector), (C.simplex, TC.simplex), (C.one_hot, TC.one_hot),
             (C.independent(C.positive, 1), TC.independent(TC.positive, 1))]
    for ours, theirs in pairs:
        _close(ours.check(fw.tensor(x)), theirs.check(torch.tensor(x)))
        assert repr(ours) == repr(theirs)
        assert ours.event_dim == theirs.event_dim and ours.is_discrete == theirs.is_discrete
    simp = np.array([[0.2, 0.8], [0.5, 0.6], [1.0, 0.0]])
    _close(C.simplex.check(fw.tensor(simp)), TC.simplex.check(torch.tensor(simp)))
    mats = np.stack([np.linalg.cholesky(_cov[0]), np.array([[1.0, 0, 0], [2, -1, 0], [0, 0, 1]]), _cov[1]])
    for ours, theirs in [(C.lower_cholesky, TC.lower_cholesky), (C.lower_triangular, TC.lower_triangular),
                         (C.positive_definite, TC.positive_definite), (C.symmetric, TC.symmetric),
                         (C.square, TC.square)]:
        _close(ours.check(fw.tensor(mats)), theirs.check(torch.tensor(mats)))
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError):
        C.dependent.check(fw.tensor(1.0))


def _transform_pairs():
    R = _real
    return [
        (lambda m: m.ExpTransform(), R), (lambda m: m.SigmoidTransform(), R),
        (lambda m: m.TanhTransform(), R), (lambda m: m.SoftplusTransform(), R),
        (lambda m: m.AffineTransform(torch.tensor(R[0]) if m is TD.transforms else fw.tensor(R[0]), -2.0), R),
        (lambda m: m.AffineTransform(1.0, 3.0, event_dim=1), R),
        (lambda m: m.PowerTransform(torch.tensor(2.5) if m is TD.transforms else fw.tensor(2.5)), np.abs(R) + 0.1),
        (lambda m: m.StickBreakingTransform(), R),
        (lambda m: m.ComposeTransform([m.AffineTransform(0.5, 2.0), m.ExpTransform()]), R),
        (lambda m: m.ComposeTransform([m.ExpTransform(), m.AffineTransform(0.5, 2.0)]).inv, np.abs(R) + 1.0),
        (lambda m: m.IndependentTransform(m.SigmoidTransform(), 1), R),
        (lambda m: m.SoftmaxTransform(), R),
        (lambda m: m.LowerCholeskyTransform(), _A[0]),
    ]


@pytest.mark.parametrize("make,x", _transform_pairs(), ids=lambda p: "")
def test_transforms(make, x, device):
    ours, theirs = make(D.transforms), make(TD.transforms)
    if isinstance(ours, D.AffineTransform) and isinstance(ours.loc, fw.Tensor):
        ours.loc = ours.loc.to(device)
    xo, xt = fw.tensor(x, device=device), torch.tensor(x)
    yo, yt = ours(xo), theirs(xt)
    _close(yo, yt)
    _close(ours.inv(yo), theirs.inv(yt), rtol=1e-6, atol=1e-8)
    assert ours.domain.event_dim == theirs.domain.event_dim
    assert ours.codomain.event_dim == theirs.codomain.event_dim
    assert ours.bijective == theirs.bijective
    if theirs.bijective:
        _close(ours.log_abs_det_jacobian(xo, yo), theirs.log_abs_det_jacobian(xt, yt), rtol=1e-6)
    assert tuple(ours.forward_shape(x.shape)) == tuple(theirs.forward_shape(x.shape))
    assert tuple(ours.inverse_shape(tuple(yt.shape))) == tuple(theirs.inverse_shape(yt.shape))
    cached = ours.with_cache(1)
    y = cached(xo)
    assert cached.inv(y) is xo


def test_biject_to_transform_to():
    C, TC = D.constraints, TD.constraints
    x = _real
    for ours, theirs in [(C.real, TC.real), (C.positive, TC.positive), (C.greater_than(1.5), TC.greater_than(1.5)),
                         (C.less_than(-1.0), TC.less_than(-1.0)), (C.unit_interval, TC.unit_interval),
                         (C.interval(-2.0, 3.0), TC.interval(-2.0, 3.0)), (C.simplex, TC.simplex),
                         (C.independent(C.positive, 1), TC.independent(TC.positive, 1))]:
        for reg, treg in [(D.biject_to, TD.biject_to), (D.transform_to, TD.transform_to)]:
            t, tt = reg(ours), treg(theirs)
            y = t(fw.tensor(x))
            _close(y, tt(torch.tensor(x)))
            assert bool(ours.check(y).all())
    with pytest.raises(NotImplementedError, match="Cannot transform _Boolean constraints"):
        D.biject_to(C.boolean)


def test_transformed_cdf_icdf_sign():
    base, tbase = D.Normal(fw.tensor(_real), fw.tensor(_pos)), TD.Normal(torch.tensor(_real), torch.tensor(_pos))
    ours = D.TransformedDistribution(base, [D.AffineTransform(1.0, -2.0)])
    theirs = TD.TransformedDistribution(tbase, [TD.AffineTransform(1.0, -2.0)])
    _close(ours.cdf(fw.tensor(_real)), theirs.cdf(torch.tensor(_real)))
    _close(ours.icdf(fw.tensor(_unit)), theirs.icdf(torch.tensor(_unit)))
    _close(ours.log_prob(fw.tensor(_real)), theirs.log_prob(torch.tensor(_real)))
    s = D.TransformedDistribution(D.Dirichlet(fw.tensor(_simplex * 3)), [D.transforms.StickBreakingTransform().inv])
    ts = TD.TransformedDistribution(TD.Dirichlet(torch.tensor(_simplex * 3)), [TD.transforms.StickBreakingTransform().inv])
    assert tuple(s.event_shape) == tuple(ts.event_shape) == (3,)
    v = np.array([[0.1, -0.5, 0.3], [1.0, 0.0, -1.0]])
    _close(s.log_prob(fw.tensor(v)), ts.log_prob(torch.tensor(v)), rtol=1e-6)


def test_lowrank_mvn_matrices():
    both = _Both("cpu")
    ours, theirs = (m.LowRankMultivariateNormal(a(_real), a(_A[:, :, :2]), a(_pos))
                    for m, a in ((D, lambda x: both(x)[0]), (TD, lambda x: both(x)[1])))
    for prop in ("covariance_matrix", "precision_matrix", "scale_tril", "variance"):
        _close(getattr(ours, prop), getattr(theirs, prop), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="cov_factor must be a batch of matrices"):
        D.LowRankMultivariateNormal(fw.zeros(3), fw.ones(4, 2), fw.ones(3))
    with pytest.raises(ValueError, match="cov_diag must be a batch of vectors"):
        D.LowRankMultivariateNormal(fw.zeros(3), fw.ones(3, 2), fw.ones(2))


# ---- sample statistics ---------------------------------------------------------------------------
def _stat_cases():
    a3 = [0.3, 1.5, 8.0]
    return {
        "Normal": lambda t: D.Normal(t([0.5, -1.0, 2.0]), t([1.0, 0.3, 2.0])),
        "Uniform": lambda t: D.Uniform(t([0.0, -2.0, 1.0]), t([1.0, 3.0, 1.5])),
        "Laplace": lambda t: D.Laplace(t([0.5, -1.0, 2.0]), t([1.0, 0.3, 2.0])),
        "Exponential": lambda t: D.Exponential(t([0.5, 1.0, 4.0])),
        "LogNormal": lambda t: D.LogNormal(t([0.5, -1.0, 0.0]), t([0.3, 0.2, 0.5])),
        "HalfNormal": lambda t: D.HalfNormal(t([0.5, 1.0, 3.0])),
        "Gamma": lambda t: D.Gamma(t(a3), t([1.0, 2.0, 0.5])),
        "Chi2": lambda t: D.Chi2(t([1.0, 3.0, 10.0])),
        "Beta": lambda t: D.Beta(t(a3), t([2.0, 0.4, 5.0])),
        "Dirichlet": lambda t: D.Dirichlet(t([0.3, 2.0, 5.0])),
        "StudentT": lambda t: D.StudentT(t([5.0, 9.0, 30.0]), t([0.0, 1.0, -1.0]), t([1.0, 2.0, 0.5])),
        "Bernoulli": lambda t: D.Bernoulli(t([0.1, 0.5, 0.9])),
        "Geometric": lambda t: D.Geometric(t([0.2, 0.5, 0.9])),
        "Poisson": lambda t: D.Poisson(t([0.7, 4.0, 25.0])),
        "Binomial": lambda t: D.Binomial(t([5.0, 80.0, 0.0]), t([0.3, 0.6, 0.5])),
        "Categorical": lambda t: D.Categorical(t([0.1, 0.2, 0.3, 0.4])),
        "OneHotCategorical": lambda t: D.OneHotCategorical(t([0.1, 0.2, 0.3, 0.4])),
        "Multinomial": lambda t: D.Multinomial(7, t([0.1, 0.2, 0.3, 0.4])),
        "MVN": lambda t: D.MultivariateNormal(t([1.0, -1.0, 0.0]), covariance_matrix=t(_cov[0])),
        "Gumbel": lambda t: D.Gumbel(t([0.5, -1.0, 2.0]), t([1.0, 0.3, 2.0])),
        "Weibull": lambda t: D.Weibull(t([1.0, 0.5, 2.0]), t([0.8, 2.0, 5.0])),
        "Pareto": lambda t: D.Pareto(t([1.0, 0.5, 2.0]), t([5.0, 6.0, 9.0])),
        "InverseGamma": lambda t: D.InverseGamma(t([6.0, 7.0, 9.0]), t([1.0, 2.0, 0.5])),
        "NegativeBinomial": lambda t: D.NegativeBinomial(t([0.5, 3.0, 20.0]),
                                                         t([0.2, 0.5, 0.7])),
        "LowRankMVN": lambda t: D.LowRankMultivariateNormal(t([1.0, -1.0, 0.0]), t(_A[0, :, :2]),
                                                            t([0.5, 1.0, 2.0])),
        "Kumaraswamy": lambda t: D.Kumaraswamy(t([0.5, 2.0, 5.0]), t([3.0, 1.0, 0.7])),
        "FisherSnedecor": lambda t: D.FisherSnedecor(t([3.0, 10.0, 30.0]), t([12.0, 20.0, 50.0])),
        "MixtureSameFamily": lambda t: D.MixtureSameFamily(
            D.Categorical(t([0.2, 0.5, 0.3])), D.Normal(t([-2.0, 0.0, 3.0]), t([0.5, 1.0, 0.3]))),
    }


_STATS = _stat_cases()


@pytest.mark.parametrize("device,name", _on_devices(list(_STATS), {"Normal", "Gamma", "Poisson", "Categorical"}))
def test_sample_statistics(device, name):
    fw.manual_seed(0)
    # the interpreter's cost is per element: cuda draws fewer (Poisson's loops most of all)
    n = 20000 if device == "cpu" else 300 if name == "Poisson" else 1000
    d = _STATS[name](lambda x: fw.tensor(np.asarray(x, dtype=np.float64), device=device))
    s = d.sample((n,))
    assert tuple(s.shape) == (n,) + tuple(d.batch_shape) + tuple(d.event_shape)
    assert bool(d.support.check(s).all())
    x = _np(s).astype(np.float64)
    if name == "Categorical":  # no mean: compare the frequencies, as one-hot vectors
        x = np.eye(4)[x.astype(np.int64)]
        d = D.OneHotCategorical(d.probs)
    mean, var = _np(d.mean), _np(d.variance)
    # the sample mean within 5 standard errors of the mean
    assert np.all(np.abs(x.mean(0) - mean) <= 5 * np.sqrt(var / n) + 1e-12), (x.mean(0), mean)
    # the sample variance within 5 standard errors (from the sample's 4th moment)
    m4 = ((x - x.mean(0)) ** 4).mean(0)
    s2 = x.var(0)
    assert np.all(np.abs(s2 - var) <= 5 * np.sqrt(np.maximum(m4 - s2 ** 2, 0) / n) + 1e-12), (s2, var)
    if name == "MVN":
        np.testing.assert_allclose(np.cov(x.T), _cov[0], atol=0.3)
    if name in ("Normal", "Laplace", "Exponential", "LogNormal", "HalfNormal", "Uniform", "Gamma"):
        q = _np(d.cdf(d.mean))
        frac = (x <= mean).mean(0)
        assert np.all(np.abs(frac - q) <= 5 * np.sqrt(q * (1 - q) / n))


def test_cauchy_and_heavy_tails():
    fw.manual_seed(0)
    n = 20000
    d = D.Cauchy(fw.tensor([0.0, 2.0], dtype=fw.float64), fw.tensor([1.0, 0.5], dtype=fw.float64))
    x = _np(d.sample((n,)))
    for q in (0.1, 0.5, 0.8):
        edge = _np(d.icdf(fw.tensor([q, q], dtype=fw.float64)))
        assert np.all(np.abs((x <= edge).mean(0) - q) <= 5 * math.sqrt(q * (1 - q) / n))
    t = D.StudentT(fw.tensor([1.5], dtype=fw.float64))
    xt = _np(t.sample((n,)))
    tt = TD.StudentT(torch.tensor([1.5], dtype=torch.float64))
    for v in (-2.0, 0.0, 1.0):
        expected = float(np.exp(torch.logsumexp(tt.log_prob(torch.linspace(-400, v, 400001, dtype=torch.float64)), 0)
                                ) * (v + 400) / 400000)
        assert abs((xt <= v).mean() - expected) <= 5 * math.sqrt(0.25 / n) + 2e-3


def test_sample_misc():
    fw.manual_seed(0)
    d = D.Normal(fw.zeros(3), fw.ones(3))
    with pytest.warns(UserWarning):
        assert tuple(d.sample_n(4).shape) == (4, 3)
    assert tuple(d.sample().shape) == (3,)
    assert not d.sample().requires_grad
    _close(d.perplexity(), TD.Normal(torch.zeros(3), torch.ones(3)).perplexity())
    with pytest.raises(NotImplementedError):
        D.Bernoulli(fw.tensor([0.5])).rsample()
    g = D.Gamma(fw.tensor([0.5]), fw.tensor([1.0]))
    assert g.sample((0,)).shape == fw.Size([0, 1])
    c = D.Categorical(fw.tensor([[0.5, 0.5], [0.1, 0.9]]))
    assert tuple(c.sample((2, 3)).shape) == (2, 3, 2) and c.sample().dtype == fw.int64


# ---- reparameterized gradients ---------------------------------------------------------------------
def _leaf(x, device):
    return fw.tensor(np.asarray(x, dtype=np.float64), device=device, requires_grad=True)


@pytest.mark.parametrize("device,name", _on_devices(
    ["Normal", "Exponential", "Uniform", "Laplace", "LogNormal", "Cauchy", "HalfNormal"], {"Normal", "LogNormal"}))
def test_rsample_pathwise_gradients(device, name):
    fw.manual_seed(0)
    a, b = _leaf([0.5, -1.0, 2.0], device), _leaf([1.0, 0.3, 2.5], device)
    dist = {"Normal": lambda: D.Normal(a, b), "Exponential": lambda: D.Exponential(b),
            "Uniform": lambda: D.Uniform(a, a + b), "Laplace": lambda: D.Laplace(a, b),
            "LogNormal": lambda: D.LogNormal(a, b), "Cauchy": lambda: D.Cauchy(a, b),
            "HalfNormal": lambda: D.HalfNormal(b)}[name]()
    x = dist.rsample((40,))
    x.sum().backward()
    xs = _np(x)
    A, B = _np(a), _np(b)
    ones = np.full(3, 40.0)
    # torch's pathwise formulas: the derivative of the sample at fixed base noise
    expected = {
        "Normal": (ones, ((xs - A) / B).sum(0)),
        "Exponential": (None, (-xs / B).sum(0)),
        "Uniform": (ones, ((xs - A) / B).sum(0)),
        "Laplace": (ones, ((xs - A) / B).sum(0)),
        "LogNormal": (xs.sum(0), (xs * (np.log(xs) - A) / B).sum(0)),
        "Cauchy": (ones, ((xs - A) / B).sum(0)),
        "HalfNormal": (None, (xs / B).sum(0)),
    }[name]
    if expected[0] is not None:
        np.testing.assert_allclose(_np(a.grad), expected[0], rtol=1e-9)
    np.testing.assert_allclose(_np(b.grad), expected[1], rtol=1e-7)


def test_gamma_implicit_gradient():
    fw.manual_seed(0)
    alphas = np.repeat([0.05, 0.3, 1.0, 2.5, 12.0, 150.0], 50)
    rate = 1.7
    alpha = _leaf(alphas, "cpu")
    beta = _leaf(np.full(alphas.shape, rate), "cpu")
    x = D.Gamma(alpha, beta).rsample()
    x.sum().backward()
    g = torch.tensor(_np(x) * rate)
    # torch's own formula is an approximation good to about 5e-4
    expected = torch._standard_gamma_grad(torch.tensor(alphas), g).numpy() / rate
    np.testing.assert_allclose(_np(alpha.grad), expected, rtol=2e-3, atol=1e-12)
    np.testing.assert_allclose(_np(beta.grad), -_np(x) / rate, rtol=1e-12)


def test_gamma_implicit_gradient_exact():
    mp = pytest.importorskip("mpmath")
    from framework.distributions.gamma import _standard_gamma_grad
    mp.mp.dps = 30
    pts = [(0.3, 0.5), (0.3, 2.0), (0.05, 1e-10), (150.0, 140.0), (2.5, 7.0), (12.0, 3.0)]
    got = _np(_standard_gamma_grad(fw.tensor([a for a, _ in pts], dtype=fw.float64),
                                   fw.tensor([x for _, x in pts], dtype=fw.float64)))
    for (a, x), g in zip(pts, got):
        a, x = mp.mpf(a), mp.mpf(x)
        dP = mp.diff(lambda aa: mp.gammainc(aa, 0, x, regularized=True), a)
        exact = float(-dP / (x ** (a - 1) * mp.e ** (-x) / mp.gamma(a)))
        assert abs(g - exact) <= 1e-6 * abs(exact)


@pytest.mark.parametrize("device", _DEVICES)
def test_beta_dirichlet_gradients_monte_carlo(device):
    fw.manual_seed(1)
    n = 4000 if device == "cpu" else 200
    a, b = 0.7, 2.0
    alpha, beta = _leaf(np.full(n, a), device), _leaf(np.full(n, b), device)
    D.Beta(alpha, beta).rsample().sum().backward()
    # d/da E[x] = b / (a + b)^2 and d/db E[x] = -a / (a + b)^2, per sample
    for grad, exact in ((alpha.grad, b / (a + b) ** 2), (beta.grad, -a / (a + b) ** 2)):
        gs = _np(grad)
        assert abs(gs.mean() - exact) <= 5 * gs.std() / math.sqrt(n), (gs.mean(), exact)
    if device == "cpu":
        conc = _leaf(np.tile([0.5, 1.5, 3.0], (n, 1)), device)
        w = fw.tensor([1.0, -2.0, 0.5], dtype=fw.float64)
        (D.Dirichlet(conc).rsample() * w).sum().backward()
        c = np.array([0.5, 1.5, 3.0])
        s = c.sum()
        # d/dc_j of E[w.x] = (w_j - w.mean_x) / s
        exact = (np.array([1.0, -2.0, 0.5]) - (np.array([1.0, -2.0, 0.5]) * c / s).sum()) / s
        gs = _np(conc.grad)
        assert np.all(np.abs(gs.mean(0) - exact) <= 5 * gs.std(0) / math.sqrt(n))


def test_mvn_and_studentt_gradients():
    fw.manual_seed(0)
    L0 = np.linalg.cholesky(_cov[0])
    loc, L = _leaf([0.0, 1.0, -1.0], "cpu"), _leaf(L0, "cpu")
    x = D.MultivariateNormal(loc, scale_tril=L).rsample((30,))
    x.sum().backward()
    eps = np.linalg.solve(L0, (_np(x) - _np(loc)).T).T
    np.testing.assert_allclose(_np(loc.grad), np.full(3, 30.0), rtol=1e-10)
    # as torch, the whole matrix is used, so its upper triangle gets a gradient too
    np.testing.assert_allclose(_np(L.grad), np.ones((3, 1)) * eps.sum(0)[None, :], rtol=1e-8, atol=1e-10)
    # StudentT: d/dloc is 1 per sample and d/dscale is (x - loc) / scale
    df, lc, sc = _leaf([4.0], "cpu"), _leaf([0.5], "cpu"), _leaf([2.0], "cpu")
    y = D.StudentT(df, lc, sc).rsample((25,))
    y.sum().backward()
    np.testing.assert_allclose(_np(lc.grad), [25.0])
    np.testing.assert_allclose(_np(sc.grad), [((_np(y) - 0.5) / 2.0).sum()], rtol=1e-9)
    assert df.grad is not None and np.isfinite(_np(df.grad)).all()


def test_empty_batches():
    o = fw.ones(0, dtype=fw.float64)
    for d in [D.Normal(o, o), D.Gamma(o, o), D.Poisson(o), D.Binomial(o, o * 0.5), D.Beta(o, o),
              D.Bernoulli(o * 0.5), D.Geometric(o * 0.5), D.StudentT(o), D.Categorical(fw.ones(0, 3)),
              D.Dirichlet(fw.ones(0, 3)), D.Multinomial(3, fw.ones(0, 3)),
              D.MultivariateNormal(fw.zeros(0, 2), fw.eye(2)), D.Independent(D.Normal(o, o), 1)]:
        s = d.sample((3,))
        assert tuple(s.shape) == (3,) + tuple(d.batch_shape) + tuple(d.event_shape)
        assert tuple(d.log_prob(s).shape) == (3,) + tuple(d.batch_shape)
