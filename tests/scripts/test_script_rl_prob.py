"""Reinforcement learning and probabilistic-model scripts (the DQN and REINFORCE tutorials,
an actor-critic/PPO step, CleanRL's PPO update, a RealNVP flow, ELBO pieces, GP regression
with a mixture density network, an HMC step) run unchanged under the framework and under
PyTorch.

Environments are replaced by NumPy-drawn observations, rewards and terminations; every
random choice (replay sampling, epsilon-greedy draws, sampled actions, HMC momenta and the
Metropolis uniform) is fed from NumPy so both runs take the same path.
"""
import math
import random
from collections import deque, namedtuple

import numpy as np
import pytest

from prob_model_workloads import elbo, gp_regression, hmc, lowrank_kl_errors, realnvp
from script_harness import compare, data, init_params

pytest.importorskip("torch")


def on(torch, device):
    """The device a workload runs on: the framework's side moves, PyTorch's stays on cpu."""
    return device if torch.__name__ == "framework" else "cpu"


# ---------------------------------------------------------------------------------------
# 1. DQN (the "Reinforcement Learning (DQN) Tutorial")

Transition = namedtuple("Transition", ("state", "action", "next_state", "reward"))


def dqn(torch, steps=5, device="cpu"):
    nn = torch.nn
    F = torch.nn.functional
    optim = torch.optim
    device = on(torch, device)

    class ReplayMemory:
        def __init__(self, capacity, seed):
            self.memory = deque([], maxlen=capacity)
            self.rng = random.Random(seed)

        def push(self, *args):
            self.memory.append(Transition(*args))

        def sample(self, batch_size):
            return self.rng.sample(self.memory, batch_size)

        def __len__(self):
            return len(self.memory)

    class DQN(nn.Module):
        def __init__(self, n_observations, n_actions):
            super().__init__()
            self.layer1 = nn.Linear(n_observations, 16)
            self.layer2 = nn.Linear(16, 16)
            self.layer3 = nn.Linear(16, n_actions)

        def forward(self, x):
            x = F.relu(self.layer1(x))
            x = F.relu(self.layer2(x))
            return self.layer3(x)

    BATCH_SIZE, GAMMA, EPS_START, EPS_END, EPS_DECAY, TAU, LR = 4, 0.99, 0.9, 0.05, 10, 0.005, 1e-3
    n_obs, n_actions = 4, 2
    rng = np.random.default_rng(7)  # the "environment" and the epsilon draws
    observations = rng.standard_normal((steps + BATCH_SIZE + 1, n_obs))
    rewards = rng.random(steps + BATCH_SIZE + 1)
    terminated = rng.random(steps + BATCH_SIZE + 1) < 0.3
    eps_draws = rng.random(steps + BATCH_SIZE + 1)
    random_actions = rng.integers(0, n_actions, steps + BATCH_SIZE + 1)

    policy_net = init_params(torch, DQN(n_obs, n_actions), seed=1).to(device)
    target_net = DQN(n_obs, n_actions).to(device)
    target_net.load_state_dict(policy_net.state_dict())
    optimizer = optim.AdamW(policy_net.parameters(), lr=LR, amsgrad=True)
    memory = ReplayMemory(100, seed=3)

    def select_action(state, t):
        eps_threshold = EPS_END + (EPS_START - EPS_END) * math.exp(-1. * t / EPS_DECAY)
        if eps_draws[t] > eps_threshold:
            with torch.no_grad():
                return policy_net(state).max(1).indices.view(1, 1)
        return torch.tensor([[random_actions[t]]], device=device, dtype=torch.long)

    def optimize_model():
        transitions = memory.sample(BATCH_SIZE)
        batch = Transition(*zip(*transitions))
        non_final_mask = torch.tensor(tuple(map(lambda s: s is not None, batch.next_state)),
                                      device=device, dtype=torch.bool)
        non_final_next_states = torch.cat([s for s in batch.next_state if s is not None])
        state_batch = torch.cat(batch.state)
        action_batch = torch.cat(batch.action)
        reward_batch = torch.cat(batch.reward)
        state_action_values = policy_net(state_batch).gather(1, action_batch)
        next_state_values = torch.zeros(BATCH_SIZE, device=device)
        with torch.no_grad():
            next_state_values[non_final_mask] = target_net(non_final_next_states).max(1).values
        expected_state_action_values = (next_state_values * GAMMA) + reward_batch
        criterion = nn.SmoothL1Loss()
        loss = criterion(state_action_values, expected_state_action_values.unsqueeze(1))
        optimizer.zero_grad()
        loss.backward()
        # the tutorial clips at 100, which these gradients never reach
        torch.nn.utils.clip_grad_value_(policy_net.parameters(), 0.05)
        optimizer.step()
        return loss.item(), loss.dtype == torch.float64

    losses, actions = [], []
    state = torch.tensor(observations[0], dtype=torch.float32, device=device).unsqueeze(0)
    for t in range(steps + BATCH_SIZE):
        action = select_action(state, t)
        actions.append(action.item())
        reward = torch.tensor([rewards[t]], device=device)  # NumPy's float64, as Gym's
        if terminated[t]:
            next_state = None
        else:
            next_state = torch.tensor(observations[t + 1], dtype=torch.float32,
                                      device=device).unsqueeze(0)
        memory.push(state, action, next_state, reward)
        state = next_state if next_state is not None else torch.tensor(
            observations[t + 1], dtype=torch.float32, device=device).unsqueeze(0)
        if len(memory) >= BATCH_SIZE:
            losses.append(optimize_model())
            target_net_state_dict = target_net.state_dict()
            policy_net_state_dict = policy_net.state_dict()
            for key in policy_net_state_dict:
                target_net_state_dict[key] = (policy_net_state_dict[key] * TAU
                                              + target_net_state_dict[key] * (1 - TAU))
            target_net.load_state_dict(target_net_state_dict)
    return {"losses": losses, "actions": actions,
            "policy": dict(policy_net.state_dict()), "target": dict(target_net.state_dict()),
            "exp_avg_sq": optimizer.state_dict()["state"][0]["max_exp_avg_sq"]}


def test_dqn(device):
    steps = 5 if device == "cpu" else 2   # the interpreter is slow
    got = compare(dqn, steps=steps, device=device)
    assert len(got["losses"]) == steps + 1
    assert all(is_double for _, is_double in got["losses"])  # the float64 rewards promote
    assert got["target"]["layer1.weight"].device.type == device


def tensor_from_numpy_scalars(torch):
    """torch.tensor over lists holding NumPy scalars, arrays or tensors keeps their dtypes
    (promoted with the Python numbers'), as a Gym reward or observation list gives."""
    items = [[np.float64(1.5)], [np.float32(1.5), 2.0], [np.int32(1)], [np.int32(1), 2],
             [np.int8(1), np.uint8(2)], [np.float32(1), np.int64(2)], [True, np.bool_(False)],
             [np.array([1.0, 2.0]), np.array([3.0, 4.0])], [[np.float64(1)], [2.0]],
             [torch.tensor(1.0, dtype=torch.float64)], [torch.tensor(1, dtype=torch.int32), 2],
             [1.5, 2], [[1, 2], [3, 4]]]
    return [(str(torch.tensor(v).dtype).split(".")[-1], torch.tensor(v).tolist())
            for v in items]


def test_tensor_dtype_from_numpy_scalars():
    import framework
    torch = pytest.importorskip("torch")
    with pytest.warns(UserWarning):   # PyTorch's warning on lists of arrays
        want = tensor_from_numpy_scalars(torch)
    assert tensor_from_numpy_scalars(framework) == want


# ---------------------------------------------------------------------------------------
# 2. REINFORCE (examples/reinforcement_learning/reinforce.py)

def reinforce(torch, episodes=3, T=5):
    nn = torch.nn
    F = torch.nn.functional
    Categorical = torch.distributions.Categorical

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 16)
            self.dropout = nn.Dropout(p=0.6)
            self.affine2 = nn.Linear(16, 2)
            self.saved_log_probs = []
            self.rewards = []

        def forward(self, x):
            x = self.affine1(x)
            x = self.dropout(x)
            x = F.relu(x)
            action_scores = self.affine2(x)
            return F.softmax(action_scores, dim=1)

    policy = init_params(torch, Policy(), seed=2)
    policy.eval()  # dropout off: its masks cannot be matched across libraries
    optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
    eps = np.finfo(np.float32).eps.item()
    gamma = 0.99
    rng = np.random.default_rng(11)
    out = {"loss": [], "entropy": [], "probs": []}

    for _ in range(episodes):
        for t in range(T):
            obs = rng.standard_normal(4).astype(np.float32)
            state = torch.from_numpy(obs).float().unsqueeze(0)
            probs = policy(state)
            m = Categorical(probs)
            action = torch.tensor([int(rng.integers(0, 2))])  # "m.sample()", fed from NumPy
            policy.saved_log_probs.append(m.log_prob(action))
            policy.rewards.append(float(rng.random()))
            out["probs"].append(m.probs.detach().clone())
        R = 0
        policy_loss = []
        returns = []
        for r in policy.rewards[::-1]:
            R = r + gamma * R
            returns.insert(0, R)
        returns = torch.tensor(returns)
        returns = (returns - returns.mean()) / (returns.std() + eps)
        for log_prob, R in zip(policy.saved_log_probs, returns):
            policy_loss.append(-log_prob * R)
        optimizer.zero_grad()
        policy_loss = torch.cat(policy_loss).sum()
        policy_loss.backward()
        optimizer.step()
        out["loss"].append(policy_loss.item())
        del policy.rewards[:]
        del policy.saved_log_probs[:]
        logits = policy.affine2(F.relu(policy.affine1(state)))
        out["entropy"].append(Categorical(logits=logits).entropy())
    out["weights"] = dict(policy.state_dict())
    action = m.sample()   # its draw cannot be matched: its shape and dtype can
    out["sample"] = [tuple(action.shape), action.dtype == torch.int64, 0 <= action.item() < 2]
    return out


def test_reinforce():
    compare(reinforce)


# ---------------------------------------------------------------------------------------
# 3. Actor-critic with a PPO update

def ppo(torch, T=6, epochs=3):
    nn = torch.nn
    F = torch.nn.functional
    D = torch.distributions

    class ActorCritic(nn.Module):
        def __init__(self, obs_dim=3, act_dim=2, hidden=8):
            super().__init__()
            self.pi = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(),
                                    nn.Linear(hidden, act_dim))
            self.v = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
            self.log_std = nn.Parameter(-0.5 * torch.ones(act_dim))

        def dist(self, obs):
            mu = self.pi(obs)
            std = torch.exp(self.log_std)
            return D.Independent(D.Normal(mu, std), 1)

        def forward(self, obs):
            return self.dist(obs), self.v(obs).squeeze(-1)

    ac = init_params(torch, ActorCritic(), seed=4)
    opt = torch.optim.Adam(ac.parameters(), lr=3e-3)
    gamma, lam, clip_ratio = 0.99, 0.95, 0.2
    obs = data(torch, 21, T, 3)
    act = data(torch, 22, T, 2)  # the sampled actions, fed from NumPy
    rew = data(torch, 23, T, kind="uniform")
    done = torch.tensor([0, 0, 1, 0, 0, 1], dtype=torch.float32)

    with torch.no_grad():
        pi, values = ac(obs)
        old_logp = pi.log_prob(act)
    # GAE, backwards in a Python loop
    advantages = torch.zeros(T)
    last_gae = 0.0
    for t in reversed(range(T)):
        next_value = values[t + 1] if t + 1 < T else 0.0
        nonterminal = 1.0 - done[t]
        delta = rew[t] + gamma * next_value * nonterminal - values[t]
        last_gae = delta + gamma * lam * nonterminal * last_gae
        advantages[t] = last_gae
    returns = advantages + values
    adv = (advantages - advantages.mean()) / (advantages.std() + 1e-8)

    out = {"adv": adv, "returns": returns, "old_logp": old_logp, "losses": []}
    for _ in range(epochs):
        pi, v = ac(obs)
        logp = pi.log_prob(act)
        ratio = torch.exp(logp - old_logp)
        clip_adv = torch.clamp(ratio, 1 - clip_ratio, 1 + clip_ratio) * adv
        loss_pi = -(torch.min(ratio * adv, clip_adv)).mean()
        loss_v = F.mse_loss(v, returns)
        entropy = pi.entropy().mean()
        loss = loss_pi + 0.5 * loss_v - 0.01 * entropy
        opt.zero_grad()
        loss.backward()
        opt.step()
        clipped = ratio.gt(1 + clip_ratio) | ratio.lt(1 - clip_ratio)
        out["losses"].append([loss_pi.item(), loss_v.item(), entropy.item(),
                              torch.as_tensor(clipped, dtype=torch.float32).mean().item()])
    out["state"] = dict(ac.state_dict())

    # the same Gaussian policy written as a MultivariateNormal, both parameterisations
    mu = ac.pi(obs).detach()
    std = torch.exp(ac.log_std.detach())
    a = data(torch, 24, 2, 2)
    cov = a @ a.T + 0.5 * torch.eye(2)
    # Spinning Up's MLPGaussianActor: the NumPy-named reduction
    out["logp_axis"] = D.Normal(mu, std).log_prob(act).sum(axis=-1)
    out["mvn_diag"] = D.MultivariateNormal(mu, scale_tril=torch.diag(std)).log_prob(act)
    out["mvn_indep"] = D.Independent(D.Normal(mu, std), 1).log_prob(act)
    full = D.MultivariateNormal(mu, covariance_matrix=cov)
    tril = D.MultivariateNormal(mu, scale_tril=torch.linalg.cholesky(cov))
    out["mvn_cov"] = full.log_prob(act)
    out["mvn_tril"] = tril.log_prob(act)
    out["mvn_entropy"] = full.entropy()
    return out


def test_ppo():
    got = compare(ppo)
    np.testing.assert_allclose(got["mvn_diag"].numpy(), got["mvn_indep"].numpy(), rtol=1e-5)
    np.testing.assert_allclose(got["mvn_cov"].numpy(), got["mvn_tril"].numpy(), rtol=1e-5)


def numpy_names(torch):
    x = data(torch, 25, 3, 4).requires_grad_()
    idx = torch.tensor([[0], [2], [1]])
    outs = [x.sum(axis=-1), torch.sum(x, axis=0, keepdims=True), x.mean(axis=1),
            x.std(axis=0), x.max(axis=1).values, x.amax(axis=0), x.logsumexp(axis=1),
            x.softmax(axis=-1), x.cumsum(axis=1), torch.cat([x, x], axis=0),
            torch.stack([x, x], axis=1), x.unsqueeze(axis=0), x.gather(axis=1, index=idx),
            x.argmax(axis=1), x.detach().gt(0).any(axis=1), x.sort(axis=1).values]
    grads = torch.autograd.grad(sum(o.float().sum() for o in outs if o.requires_grad), x)
    return outs, grads


def numpy_name_errors(torch):
    x = data(torch, 25, 3, 4)
    errors = []
    for call in (lambda: x.sum(1, axis=1), lambda: torch.cumsum(x),
                 lambda: x.gather(axis=1), lambda: torch.nn.functional.softmax(x, axis=1)):
        with pytest.raises(TypeError) as info:
            call()
        errors.append(str(info.value))
    return errors


def test_numpy_axis_names():
    """PyTorch's bound functions and methods take axis=/keepdims= for dim=/keepdim=."""
    import framework
    torch = pytest.importorskip("torch")
    assert numpy_name_errors(framework) == numpy_name_errors(torch)
    compare(numpy_names)


# ---------------------------------------------------------------------------------------
# 3b. CleanRL's ppo.py (discrete actions): rollout buffers, GAE, minibatch epochs

def cleanrl_ppo(torch, num_envs=2, num_steps=4, update_epochs=2, num_minibatches=2):
    nn = torch.nn
    optim = torch.optim
    from_numpy_rng = np.random.default_rng(81)   # the vectorised "environment"
    obs_shape, n_actions = (3,), 2
    gamma, gae_lambda, clip_coef = 0.99, 0.95, 0.2
    ent_coef, vf_coef, max_grad_norm = 0.01, 0.5, 0.5
    batch_size = num_envs * num_steps
    minibatch_size = batch_size // num_minibatches

    def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
        torch.nn.init.orthogonal_(layer.weight, std)
        torch.nn.init.constant_(layer.bias, bias_const)
        return layer

    class Agent(nn.Module):
        def __init__(self):
            super().__init__()
            self.critic = nn.Sequential(layer_init(nn.Linear(3, 8)), nn.Tanh(),
                                        layer_init(nn.Linear(8, 1), std=1.0))
            self.actor = nn.Sequential(layer_init(nn.Linear(3, 8)), nn.Tanh(),
                                       layer_init(nn.Linear(8, n_actions), std=0.01))

        def get_value(self, x):
            return self.critic(x)

        def get_action_and_value(self, x, action):
            logits = self.actor(x)
            probs = torch.distributions.Categorical(logits=logits)
            return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    agent = init_params(torch, Agent(), seed=8)   # orthogonal init cannot be matched
    optimizer = optim.Adam(agent.parameters(), lr=2.5e-4, eps=1e-5)
    obs = torch.zeros((num_steps, num_envs) + obs_shape)
    actions = torch.zeros((num_steps, num_envs))
    logprobs = torch.zeros((num_steps, num_envs))
    rewards = torch.zeros((num_steps, num_envs))
    dones = torch.zeros((num_steps, num_envs))
    values = torch.zeros((num_steps, num_envs))

    next_obs = torch.Tensor(from_numpy_rng.standard_normal((num_envs,) + obs_shape))
    next_done = torch.zeros(num_envs)
    frac = 1.0 - (1 - 1.0) / 2
    optimizer.param_groups[0]["lr"] = frac * 2.5e-4
    for step in range(0, num_steps):
        obs[step] = next_obs
        dones[step] = next_done
        with torch.no_grad():
            sampled = torch.tensor(from_numpy_rng.integers(0, n_actions, num_envs))
            action, logprob, _, value = agent.get_action_and_value(next_obs, sampled)
            values[step] = value.flatten()
        actions[step] = action
        logprobs[step] = logprob
        reward = from_numpy_rng.random(num_envs)
        next_done_np = from_numpy_rng.random(num_envs) < 0.3
        rewards[step] = torch.tensor(reward).view(-1)
        next_obs = torch.Tensor(from_numpy_rng.standard_normal((num_envs,) + obs_shape))
        next_done = torch.Tensor(next_done_np)

    with torch.no_grad():
        next_value = agent.get_value(next_obs).reshape(1, -1)
        advantages = torch.zeros_like(rewards)
        lastgaelam = 0
        for t in reversed(range(num_steps)):
            if t == num_steps - 1:
                nextnonterminal = 1.0 - next_done
                nextvalues = next_value
            else:
                nextnonterminal = 1.0 - dones[t + 1]
                nextvalues = values[t + 1]
            delta = rewards[t] + gamma * nextvalues * nextnonterminal - values[t]
            advantages[t] = lastgaelam = delta + gamma * gae_lambda * nextnonterminal * lastgaelam
        returns = advantages + values

    b_obs = obs.reshape((-1,) + obs_shape)
    b_logprobs = logprobs.reshape(-1)
    b_actions = actions.reshape(-1)
    b_advantages = advantages.reshape(-1)
    b_returns = returns.reshape(-1)
    b_values = values.reshape(-1)

    b_inds = np.arange(batch_size)
    shuffle_rng = np.random.default_rng(82)
    clipfracs, stats = [], []
    for epoch in range(update_epochs):
        shuffle_rng.shuffle(b_inds)
        for start in range(0, batch_size, minibatch_size):
            end = start + minibatch_size
            mb_inds = b_inds[start:end]
            _, newlogprob, entropy, newvalue = agent.get_action_and_value(
                b_obs[mb_inds], b_actions.long()[mb_inds])
            logratio = newlogprob - b_logprobs[mb_inds]
            ratio = logratio.exp()
            with torch.no_grad():
                old_approx_kl = (-logratio).mean()
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs += [((ratio - 1.0).abs() > clip_coef).float().mean().item()]
            mb_advantages = b_advantages[mb_inds]
            mb_advantages = (mb_advantages - mb_advantages.mean()) / (mb_advantages.std() + 1e-8)
            pg_loss1 = -mb_advantages * ratio
            pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - clip_coef, 1 + clip_coef)
            pg_loss = torch.max(pg_loss1, pg_loss2).mean()
            newvalue = newvalue.view(-1)
            v_loss_unclipped = (newvalue - b_returns[mb_inds]) ** 2
            v_clipped = b_values[mb_inds] + torch.clamp(newvalue - b_values[mb_inds],
                                                        -clip_coef, clip_coef)
            v_loss_clipped = (v_clipped - b_returns[mb_inds]) ** 2
            v_loss = 0.5 * torch.max(v_loss_unclipped, v_loss_clipped).mean()
            entropy_loss = entropy.mean()
            loss = pg_loss - ent_coef * entropy_loss + v_loss * vf_coef
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(agent.parameters(), max_grad_norm)
            optimizer.step()
            stats.append([loss.item(), old_approx_kl.item(), approx_kl.item(), grad_norm.item()])
    y_pred, y_true = b_values.cpu().numpy(), b_returns.cpu().numpy()
    var_y = np.var(y_true)
    explained_var = np.nan if var_y == 0 else 1 - np.var(y_true - y_pred) / var_y
    return {"stats": stats, "clipfracs": clipfracs, "explained_var": explained_var,
            "advantages": advantages, "state": dict(agent.state_dict())}


def test_cleanrl_ppo():
    compare(cleanrl_ppo)


# ---------------------------------------------------------------------------------------
# 4-7. Probabilistic models (bodies in prob_model_workloads.py)

def test_realnvp():
    got = compare(realnvp, rtol=2e-4)
    assert got["buffers"]
    assert float(got["roundtrip"].abs().max()) < 1e-5
    np.testing.assert_allclose(got["lognormal"].numpy(), got["lognormal_ref"].numpy(), rtol=1e-5)


def test_elbo():
    import framework
    assert lowrank_kl_errors(framework) == lowrank_kl_errors(pytest.importorskip("torch"))
    got = compare(elbo)
    np.testing.assert_allclose(got["kl"].detach().numpy(), got["kl_closed"].detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    shape, loc_grad, eps_gap = got["rsample"]
    assert shape == (3, 4)
    np.testing.assert_allclose(loc_grad.numpy(), 3.0)
    np.testing.assert_allclose(eps_gap.numpy(), 0.0, atol=1e-5)
    for lowrank, full in zip(got["kl_lowrank"], got["kl_lowrank_as_full"]):
        np.testing.assert_allclose(lowrank.detach().numpy(), full.detach().numpy(), rtol=1e-4)


def test_gp_regression():
    got = compare(gp_regression, rtol=2e-4, atol=2e-5)
    np.testing.assert_allclose(got["cdist_rbf"].numpy(), got["diff_rbf"].numpy(), atol=1e-6)


def test_hmc():
    got = compare(hmc)
    acc = got["accept"]
    assert acc.dtype.is_floating_point is False and bool(acc.any())
