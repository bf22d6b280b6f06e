"""Random ops: randperm/randint bounds, multinomial probabilities, bernoulli p, normal std,
in-place samplers' parameters, seeds. OK cases return only what is deterministic."""
from badinput import C, E, OK

R, T, I, V = "RuntimeError", "TypeError", "IndexError", "ValueError"
NI = "NotImplementedError"
NAN, INF = float("nan"), float("inf")
PROBS = "probability tensor contains either `inf`, `nan` or element < 0"


def z3(m, d):
    return m.zeros(3, device=d)


def seeded(m, seed):
    """manual_seed(seed).initial_seed(), leaving the global generator's state as it was."""
    state = m.get_rng_state()
    try:
        return m.manual_seed(seed).initial_seed()
    finally:
        m.set_rng_state(state)


def geom(t):
    """What is deterministic about a random tensor: dtype and shape."""
    return [t.dtype, t.shape]


CASES = [
    # randperm
    C("randperm_half_big", lambda m, d: m.randperm(3000, dtype=m.float16, device=d), E(R, "n cannot be greater than 2049 for Half type.")),
    C("randperm_bfloat16_300_ok", lambda m, d: geom(m.randperm(300, dtype=m.bfloat16, device=d)), OK),
    C("randperm_int8_big", lambda m, d: m.randperm(200, dtype=m.int8, device=d), E(R, "value cannot be converted to type")),
    C("randperm_uint8_ok_256", lambda m, d: m.randperm(256, dtype=m.uint8, device=d).sort().values, OK),
    C("randperm_half_ok_2048", lambda m, d: m.randperm(2048, dtype=m.float16, device=d).sort().values, OK),
    C("randperm_neg", lambda m, d: m.randperm(-1, device=d), E(R, "Trying to create tensor with negative dimension -1: [-1]")),
    C("randperm_float", lambda m, d: m.randperm(2.5, device=d), E(T, "randperm() received an invalid combination of arguments - got (float,")),
    C("randperm_bool", lambda m, d: m.randperm(3, dtype=m.bool, device=d), E(NI, "not implemented for 'Bool'")),
    C("randperm_huge", lambda m, d: m.randperm(2**62, device=d), E(R, "Storage size calculation overflowed"), crash=True),
    C("randperm_ok_zero", lambda m, d: m.randperm(0, device=d), OK),
    C("randperm_ok_sorted", lambda m, d: m.randperm(10, device=d).sort().values, OK),
    # randint / random_
    C("randint_low_eq_high", lambda m, d: m.randint(5, 5, (2,), device=d), E(R, "random_ expects 'from' to be less than 'to', but got from=5 >= to=5")),
    C("randint_low_gt_high", lambda m, d: m.randint(5, 3, (2,), device=d), E(R, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3")),
    C("randint_high_zero", lambda m, d: m.randint(0, (2,), device=d), E(R, "random_ expects 'from' to be less than 'to', but got from=0 >= to=0")),
    C("randint_high_2_63", lambda m, d: m.randint(0, 2**63, (2,), device=d), E(V, "Overflow when unpacking long long")),
    C("randint_int8_high", lambda m, d: m.randint(0, 300, (2,), dtype=m.int8, device=d), E(R, "to - 1 is out of bounds for signed char")),
    C("randint_uint8_neg_low", lambda m, d: m.randint(-1, 5, (2,), dtype=m.uint8, device=d), E(R, "from is out of bounds for unsigned char")),
    C("randint_float_bounds", lambda m, d: m.randint(0.5, 3, (2,), device=d), E(T, "randint() received an invalid combination of arguments")),
    C("randint_ok_float_dtype", lambda m, d: geom(m.randint(0, 3, (2,), dtype=m.float32, device=d)), OK),
    C("randint_ok_bool", lambda m, d: geom(m.randint(0, 2, (2,), dtype=m.bool, device=d)), OK),
    C("randint_ok_range", lambda m, d: bool(((m.randint(-3, 3, (50,), device=d) >= -3) & (m.randint(-3, 3, (50,), device=d) < 3)).all()), OK),
    C("random_from_gt_to", lambda m, d, t: t.random_(5, 3), E(R, "random_ expects 'from' to be less than 'to', but got from=5 >= to=3"), target=z3),
    C("random_bool_to_3", lambda m, d, t: t.random_(0, 3), E(R, "to - 1 is out of bounds for bool"), target=lambda m, d: m.zeros(3, dtype=m.bool, device=d)),
    C("random_neg_to", lambda m, d, t: t.random_(-1), E(R, "random_ expects 'from' to be less than 'to', but got from=0 >= to=-1"), target=z3),
    # multinomial
    C("multinomial_neg", lambda m, d: m.multinomial(m.tensor([0.5, -0.1], device=d), 1), E(R, PROBS)),
    C("multinomial_nan", lambda m, d: m.multinomial(m.tensor([0.5, NAN], device=d), 1), E(R, PROBS)),
    C("multinomial_inf", lambda m, d: m.multinomial(m.tensor([0.5, INF], device=d), 1), E(R, PROBS)),
    C("multinomial_zero_sum", lambda m, d: m.multinomial(m.zeros(3, device=d), 1), E(R, "invalid multinomial distribution (sum of probabilities <= 0)")),
    C("multinomial_too_many", lambda m, d: m.multinomial(m.ones(3, device=d), 4), E(R, "cannot sample n_sample > prob_dist.size(-1) samples without replacement")),
    C("multinomial_zero_samples", lambda m, d: m.multinomial(m.ones(3, device=d), 0), E(R, "cannot sample n_sample <= 0 samples")),
    C("multinomial_neg_samples", lambda m, d: m.multinomial(m.ones(3, device=d), -1), E(R, "cannot sample n_sample <= 0 samples")),
    C("multinomial_3d", lambda m, d: m.multinomial(m.ones(1, 1, 3, device=d), 1), E(R, "prob_dist must be 1 or 2 dim")),
    C("multinomial_int", lambda m, d: m.multinomial(m.ones(3, dtype=m.int64, device=d), 1), E(R, "multinomial only supports floating-point dtypes for input, got: Long")),
    C("multinomial_empty", lambda m, d: m.multinomial(m.zeros(0, device=d), 1), E(R, "cannot sample n_sample > prob_dist.size(-1) samples without")),
    C("multinomial_row_zero", lambda m, d: m.multinomial(m.tensor([[1., 1.], [0., 0.]], device=d), 1), E(R, "invalid multinomial distribution (sum of probabilities <= 0)")),
    C("multinomial_float_samples", lambda m, d: m.multinomial(m.ones(3, device=d), 1.5), E(T, "multinomial(): argument 'num_samples' (position 2) must be int, not float")),
    C("multinomial_ok_replacement", lambda m, d: geom(m.multinomial(m.ones(3, device=d), 10, replacement=True)), OK),
    C("multinomial_ok_onehot", lambda m, d: m.multinomial(m.tensor([0., 0., 1.], device=d), 2, replacement=True), OK),
    C("multinomial_ok_all", lambda m, d: m.multinomial(m.tensor([1., 2., 3.], device=d), 3).sort().values, OK),
    # bernoulli
    C("bernoulli_p_gt_1", lambda m, d: m.bernoulli(m.tensor([1.5], device=d)), E(R, "Expected p_in >= 0 && p_in <= 1 to be true")),
    C("bernoulli_p_neg", lambda m, d: m.bernoulli(m.tensor([-0.5], device=d)), E(R, "Expected p_in >= 0 && p_in <= 1 to be true")),
    C("bernoulli_p_nan", lambda m, d: m.bernoulli(m.tensor([NAN], device=d)), E(R, "Expected p_in >= 0 && p_in <= 1 to be true")),
    C("bernoulli_inplace_p_gt_1", lambda m, d, t: t.bernoulli_(1.5), E(R, "bernoulli_ expects p to be in [0, 1], but got p=1.5"), target=z3),
    C("bernoulli_inplace_p_neg", lambda m, d, t: t.bernoulli_(-0.1), E(R, "bernoulli_ expects p to be in [0, 1], but got p=-0.1"), target=z3),
    C("bernoulli_inplace_tensor_p", lambda m, d, t: t.bernoulli_(m.tensor([0.5, 2., 0.5], device=d)), E(R, "Expected p_in >= 0 && p_in <= 1 to be true"), target=z3),
    C("bernoulli_int_input", lambda m, d: m.bernoulli(m.ones(3, dtype=m.int64, device=d)), E(NI, "not implemented for 'Long'")),
    C("bernoulli_ok_edges", lambda m, d: m.bernoulli(m.tensor([0., 1., 1., 0.], device=d)), OK),
    # normal and the in-place samplers
    C("normal_neg_std", lambda m, d: m.normal(0., -1., (2,), device=d), E(R, "normal expects std >= 0.0, but found std -1")),
    C("normal_tensor_neg_std", lambda m, d: m.normal(m.zeros(2, device=d), m.tensor([1., -1.], device=d)), E(R, "normal expects all elements of std >= 0.0")),
    C("normal_nan_std", lambda m, d: m.normal(0., NAN, (2,), device=d), E(R, "normal expects std >= 0.0, but found std nan")),
    C("normal_inplace_neg_std", lambda m, d, t: t.normal_(0, -1), E(R, "normal expects std >= 0.0, but found std -1"), target=z3),
    C("normal_int_out", lambda m, d, t: t.normal_(), E(NI, "not implemented for 'Long'"), target=lambda m, d: m.zeros(3, dtype=m.int64, device=d)),
    C("normal_shape_mismatch", lambda m, d: m.normal(m.zeros(2, device=d), m.ones(3, device=d)), E(R, "The size of tensor a (2) must match the size of tensor b (3)")),
    C("normal_ok_zero_std", lambda m, d: m.normal(m.tensor([1., 2.], device=d), 0.), OK),
    C("uniform_from_gt_to", lambda m, d, t: t.uniform_(1, 0), E(R, "uniform_ expects to return a [from, to) range, but found from=1 > to=0"), target=z3),
    C("uniform_inf", lambda m, d, t: t.uniform_(0, INF), E(R, "to is out of bounds for float"), target=z3),
    C("uniform_int", lambda m, d, t: t.uniform_(), E(NI, "not implemented for 'Long'"), target=lambda m, d: m.zeros(3, dtype=m.int64, device=d)),
    C("uniform_ok_equal_bounds", lambda m, d, t: t.uniform_(2., 2.), OK, target=z3),
    C("exponential_neg", lambda m, d, t: t.exponential_(-1.), E(R, "exponential_ expects lambda > 0.0, but found lambda=-1"), target=z3),
    C("exponential_zero", lambda m, d, t: t.exponential_(0.), E(R, "exponential_ expects lambda > 0.0, but found lambda=0"), target=z3),
    C("geometric_zero", lambda m, d, t: t.geometric_(0.), E(R, "geometric_ expects p to be in (0, 1), but got p=0"), target=z3),
    C("geometric_gt_1", lambda m, d, t: t.geometric_(1.5), E(R, "geometric_ expects p to be in (0, 1), but got p=1.5"), target=z3),
    C("log_normal_neg_std", lambda m, d, t: t.log_normal_(0., -1.), E(R, "log_normal_ expects std > 0.0, but found std=-1"), target=z3),
    C("cauchy_neg_sigma", lambda m, d, t: t.cauchy_(0., -1.), E(R, "cauchy_ expects sigma > 0.0, but found sigma=-1"), target=z3),
    # float samplers given integer dtypes, bad seeds
    C("rand_int_dtype", lambda m, d: m.rand(2, dtype=m.int64, device=d), E(NI, "not implemented for 'Long'")),
    C("randn_int_dtype", lambda m, d: m.randn(2, dtype=m.int64, device=d), E(NI, "not implemented for 'Long'")),
    C("rand_bool_dtype", lambda m, d: m.rand(2, dtype=m.bool, device=d), E(NI, "not implemented for 'Bool'")),
    C("rand_like_int", lambda m, d: m.rand_like(m.zeros(2, dtype=m.int64, device=d)), E(NI, "not implemented for 'Long'")),
    C("randint_like_ok", lambda m, d: geom(m.randint_like(m.zeros(2, device=d), 5)), OK),
    C("manual_seed_str", lambda m, d: seeded(m, "a"), E(V, "invalid literal for int() with base 10: 'a'")),
    C("manual_seed_huge", lambda m, d: seeded(m, 2**64), E(V, "Overflow when unpacking long long")),
    C("manual_seed_ok_neg", lambda m, d: seeded(m, -1), OK),
    C("manual_seed_float", lambda m, d: seeded(m, 1.5), OK),
]
