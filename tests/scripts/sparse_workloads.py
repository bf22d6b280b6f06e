"""Recommender, sparse-tensor and scatter script bodies in plain PyTorch, used by
test_script_graphs.py."""
import io
import warnings

import numpy as np

from script_harness import data, init_params


# --------------------------------------------------------------------------------------
# 5. Recommendation: MF + BPR, EmbeddingBag, sparse interactions, LightGCN, recall@k
# --------------------------------------------------------------------------------------
def recommender(torch, n_users=8, n_items=12, dim=4, layers=2, steps=3, k=3):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(61)
    inter = np.unique(np.stack([rng.integers(0, n_users, 40), rng.integers(0, n_items, 40)]),
                      axis=1)
    users = torch.from_numpy(inter[0])
    items = torch.from_numpy(inter[1])

    class MF(nn.Module):
        def __init__(self):
            super().__init__()
            self.user_emb = nn.Embedding(n_users, dim, sparse=False)
            self.item_emb = nn.Embedding(n_items, dim)

        def forward(self, u, i):
            return (self.user_emb(u) * self.item_emb(i)).sum(dim=-1)

    class LightGCN(nn.Module):
        def __init__(self, graph):
            super().__init__()
            self.graph = graph
            self.emb = nn.Embedding(n_users + n_items, dim)

        def forward(self):
            all_emb = self.emb.weight
            embs = [all_emb]
            for _ in range(layers):
                all_emb = torch.sparse.mm(self.graph, all_emb)
                embs.append(all_emb)
            out = torch.stack(embs, dim=1).mean(1)
            return torch.split(out, [n_users, n_items])

    # interaction matrix with a duplicate entry, coalesced
    idx = torch.stack([torch.cat([users, users[:1]]), torch.cat([items, items[:1]])])
    R = torch.sparse_coo_tensor(idx, torch.ones(idx.size(1)), (n_users, n_items)).coalesce()
    user_deg = torch.sparse.sum(R, dim=1).to_dense()
    r_idx, r_val = R.indices(), R.values()
    # normalised bipartite adjacency D^-1/2 A D^-1/2
    rows = torch.cat([r_idx[0], r_idx[1] + n_users])
    cols = torch.cat([r_idx[1] + n_users, r_idx[0]])
    vals = torch.ones(rows.numel())
    deg = torch.zeros(n_users + n_items).scatter_add_(0, rows, vals)
    d_inv = deg.pow(-0.5)
    d_inv[torch.isinf(d_inv)] = 0.
    graph = torch.sparse_coo_tensor(torch.stack([rows, cols]), d_inv[rows] * d_inv[cols],
                                    (n_users + n_items,) * 2).coalesce()

    # cached to disk and read back, as recommender repositories do with their graph
    buf = io.BytesIO()
    torch.save({"graph": graph, "R": R.to_sparse_csr()}, buf)
    buf.seek(0)
    cached = torch.load(buf)
    graph = cached["graph"]

    neg = torch.from_numpy(rng.integers(0, n_items, size=(steps, users.numel())))
    mf = init_params(torch, MF(), seed=62)
    lgcn = init_params(torch, LightGCN(graph), seed=63)
    opt = torch.optim.Adam(list(mf.parameters()) + list(lgcn.parameters()), lr=0.05)
    losses = []
    for s in range(steps):
        opt.zero_grad()
        bpr = -F.logsigmoid(mf(users, items) - mf(users, neg[s])).mean()
        u_e, i_e = lgcn()
        pos = (u_e[users] * i_e[items]).sum(-1)
        ng = (u_e[users] * i_e[neg[s]]).sum(-1)
        reg = (lgcn.emb.weight.norm(2).pow(2)) / users.numel()
        loss = bpr + F.softplus(ng - pos).mean() + 1e-4 * reg
        loss.backward()
        opt.step()
        losses.append(loss.item())

    # multi-hot features through an EmbeddingBag with offsets
    bag = init_params(torch, nn.EmbeddingBag(10, 3, mode="sum"), seed=64)
    feats = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    offsets = torch.tensor([0, 2, 2, 5])
    bag_out = bag(feats, offsets)
    bag_out.pow(2).sum().backward()

    with torch.no_grad():
        u_e, i_e = lgcn()
        scores = u_e @ i_e.t()
        scores[R.to_dense() > 0] = -float("inf")
        topk = torch.topk(scores, k, dim=1).indices
        test_items = torch.from_numpy(rng.integers(0, n_items, size=(n_users, 2)))
        hits = torch.isin(topk, test_items[0])
        recall = hits.sum(dim=1).float() / 2
    return {"losses": losses, "deg": user_deg, "R_idx": r_idx, "R_val": r_val,
            "graph_val": graph.values(), "R_csr": cached["R"].to_dense(), "bag": bag_out, "bag_grad": bag.weight.grad,
            "topk": topk, "recall": recall.mean().item(),
            "mf_grad": mf.user_emb.weight.grad}


# --------------------------------------------------------------------------------------
# 6. The sparse tensor API on its own
# --------------------------------------------------------------------------------------
def sparse_api(torch):
    i = torch.tensor([[0, 1, 1, 2, 0, 3], [2, 0, 0, 3, 2, 1]])
    v = torch.tensor([1., 2., 3., 4., 5., 6.])
    S = torch.sparse_coo_tensor(i, v, (4, 5))
    out = {"uncoalesced": S.is_coalesced()}
    C = S.coalesce()
    out["coalesce"] = [C.indices(), C.values(), C.is_coalesced(), C._nnz()]
    dense = C.to_dense()
    out["dense"] = dense
    back = dense.to_sparse()
    out["to_sparse"] = [back.indices(), back.values(), back.layout == torch.sparse_coo]
    csr = dense.to_sparse_csr()
    out["csr"] = [csr.crow_indices(), csr.col_indices(), csr.values(),
                  csr.layout == torch.sparse_csr]
    x = data(torch, 71, 5, 3)
    out["csr_mm"] = csr @ x
    out["coo_mm"] = torch.sparse.mm(C, x)
    out["softmax"] = torch.sparse.softmax(C, dim=1).to_dense()
    out["log_softmax"] = torch.sparse.log_softmax(C, dim=0).to_dense()
    bias = data(torch, 72, 4, 3)
    out["addmm"] = torch.sparse.addmm(bias, C, x, beta=0.5, alpha=2.0)
    out["add"] = (C + C).coalesce().to_dense()
    out["scale"] = (C * 3.0).to_dense()
    out["t"] = C.t().to_dense()
    out["index_select"] = [C.index_select(1, torch.tensor([2, 0, 3, 2])).to_dense(),
                           S.index_select(0, torch.tensor([3, 1])).to_dense(),
                           C.index_select(-1, torch.tensor([], dtype=torch.long)).shape]
    nc = C.narrow_copy(0, 1, 2)
    out["narrow_copy"] = [nc.to_dense(), nc.is_coalesced(),
                          S.narrow_copy(1, 1, 3).to_dense()]

    # a dense tensor read at a sparse tensor's indices, differentiably
    xm = data(torch, 74, 4, 5).requires_grad_(True)
    masked = xm.sparse_mask(C)
    masked.to_dense().pow(2).sum().backward()
    out["sparse_mask"] = [masked.indices(), masked.values(), masked.is_coalesced(), xm.grad]

    # combining and reshaping: cat along sparse and dense dims, unsqueeze, pow
    H = torch.sparse_coo_tensor(torch.tensor([[0, 2, 0]]), data(torch, 75, 3, 2), (4, 2))
    out["cat"] = [torch.cat([C, S, C.double()], dim=1).to_dense(),
                  torch.cat([S, C]).to_dense(), torch.cat([H, H], dim=1).to_dense(),
                  torch.cat([C, S]).is_coalesced()]
    out["unsqueeze"] = [C.unsqueeze(1).to_dense(), H.unsqueeze(-1).to_dense()]
    out["pow"] = [S.pow(2).to_dense(), (C ** -1).values(), S.pow(2).is_coalesced()]

    # neighbourhood mean/max aggregation as a CSR product with reduce (PyG's SparseTensor)
    xr = data(torch, 77, 5, 3).requires_grad_(True)
    aggs = [torch.sparse.mm(csr, xr, red) for red in ("mean", "amax", "min")]
    sum(a.sum() for a in aggs).backward()
    out["mm_reduce"] = aggs + [xr.grad]

    # gradients through sparse.mm w.r.t. the dense operand and the sparse values
    A = torch.sparse_coo_tensor(i, v, (4, 5)).coalesce().requires_grad_(True)
    xg = data(torch, 73, 5, 3).requires_grad_(True)
    loss = torch.sparse.mm(A, xg).pow(2).sum()
    loss.backward()
    out["grad_x"] = xg.grad
    out["grad_A"] = A.grad.coalesce().to_dense()
    # and through a batched sparse product and a power of the values
    i3 = torch.tensor([[0, 0, 1, 1, 1], [0, 2, 1, 2, 0], [1, 0, 3, 3, 2]])
    B3 = torch.sparse_coo_tensor(i3, v[:5], (2, 3, 4)).coalesce().requires_grad_(True)
    xb = data(torch, 76, 2, 4, 2).requires_grad_(True)
    y = torch.bmm(B3, xb)
    y.pow(2).sum().backward()
    out["bmm"] = [y, xb.grad, B3.grad.to_dense(), B3.grad.is_sparse]
    P = torch.sparse_coo_tensor(i3, v[:5], (2, 3, 4)).coalesce().requires_grad_(True)
    torch.sparse.sum(P.pow(3)).backward()
    out["pow_grad"] = [P.grad.to_dense(), P.grad.is_sparse]
    # a sparse .grad meeting a dense one (torch.bmm's) becomes dense
    torch.bmm(P, xb.detach()).sum().backward()
    out["mixed_grad"] = [P.grad.to_dense(), P.grad.is_sparse]
    # torch.mm (unlike torch.sparse.mm) gives a sparse leaf a dense gradient
    M = torch.sparse_coo_tensor(i, v, (4, 5)).coalesce().requires_grad_(True)
    torch.mm(M, xg.detach()).sum().backward()
    out["mm_grad"] = [M.grad, M.grad.is_sparse]
    return out


# --------------------------------------------------------------------------------------
# 7. Scatter semantics on their own
# --------------------------------------------------------------------------------------
def scatter_semantics(torch, device="cpu", int_only=False):
    out = {}
    idx = torch.tensor([0, 2, 0, 1, 2, 2], device=device)
    src_f = torch.tensor([1., 2., 3., 4., 5., 6.], device=device)
    for dtype in (torch.int64,) if int_only else (torch.float32, torch.int64):
        src = src_f.to(dtype)
        base = torch.tensor([10, 20, 30], dtype=dtype, device=device)
        name = str(dtype).split(".")[-1]
        # "max" and "min" are the old names of amax and amin, still taken
        for red in ("sum", "prod", "mean", "amax", "amin", "max", "min"):
            for inc in (True, False):
                r = base.scatter_reduce(0, idx, src, reduce=red, include_self=inc)
                out[f"{name}_{red}_{inc}"] = [r, str(r.dtype).split(".")[-1]]
        out[f"{name}_index_put"] = base.clone().index_put_((idx,), src, accumulate=True)
        out[f"{name}_put"] = base.clone().put_(idx, src, accumulate=True)
        out[f"{name}_index_reduce"] = base.clone().index_reduce_(0, idx, src, "prod")
        out[f"{name}_index_reduce_mean"] = base.clone().index_reduce_(
            0, idx, src, "mean", include_self=False)
    # scatter with the reduce= argument (deprecated for scatter_ in favour of scatter_reduce_)
    base2 = torch.ones(2, 4, device=device)
    i2 = torch.tensor([[0, 1, 0, 3], [2, 2, 1, 0]], device=device)
    s2 = torch.arange(1., 9., device=device).view(2, 4)
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        out["scatter_add"] = base2.clone().scatter_(1, i2, s2, reduce="add")
        out["scatter_mul"] = base2.clone().scatter_(1, i2, s2, reduce="multiply")
        out["scatter_value_add"] = base2.scatter(1, i2, 2.5, reduce="add")
    out["scatter_plain"] = torch.zeros(3, 4, device=device).scatter(
        0, torch.tensor([[0, 1, 2, 0]], device=device), s2[:1])
    mask = torch.tensor([[True, False, True], [False, True, True]], device=device)
    out["masked_scatter"] = torch.zeros(2, 3, device=device).masked_scatter(
        mask, torch.arange(10., 16., device=device).view(2, 3))

    # gradients
    x = torch.tensor([1., 2., 3., 4., 5., 6.], device=device, requires_grad=True)
    b = torch.tensor([1., 5., 0.5], device=device, requires_grad=True)
    grads = {}
    for red in ("sum", "mean", "amax", "amin", "prod"):
        for inc in (True, False):
            x.grad = b.grad = None
            w = torch.tensor([1., -2., 3.], device=device)
            (b.scatter_reduce(0, idx, x, reduce=red, include_self=inc) * w).sum().backward()
            grads[f"{red}_{inc}"] = [x.grad, b.grad]
    out["grads"] = grads
    x.grad = None
    torch.zeros(3, device=device).index_add(0, idx, x, alpha=2.).pow(2).sum().backward()
    out["index_add_grad"] = x.grad
    return out


def scatter_errors(torch):
    """Error types and texts for out-of-range indices."""
    msgs = {}
    base = torch.zeros(3)
    sparse = torch.sparse_coo_tensor(torch.tensor([[0, 1], [2, 0]]), torch.ones(2), (2, 3))
    cases = {
        "scatter": lambda: base.scatter(0, torch.tensor([0, 5]), torch.ones(2)),
        "scatter_reduce": lambda: base.scatter_reduce(0, torch.tensor([3]), torch.ones(1),
                                                      reduce="sum"),
        "index_add": lambda: base.index_add(0, torch.tensor([4]), torch.ones(1)),
        "index_put": lambda: base.index_put_((torch.tensor([7]),), torch.ones(1),
                                             accumulate=True),
        "scatter_bad_reduce": lambda: base.scatter_reduce(0, torch.tensor([0]),
                                                          torch.ones(1), reduce="max"),
        "scatter_dtype": lambda: base.scatter_(0, torch.tensor([0.]), torch.ones(1)),
        # the forward takes "max"; PyTorch's backward does not
        "scatter_max_backward": lambda: base.scatter_reduce(
            0, torch.tensor([1]), torch.ones(1, requires_grad=True), reduce="max")
        .sum().backward(),
        "sparse_index_select": lambda: sparse.index_select(1, torch.tensor([5])),
        "sparse_narrow_copy": lambda: sparse.narrow_copy(1, -2, 1),
    }
    for name, fn in cases.items():
        try:
            fn()
            msgs[name] = None
        except Exception as e:  # noqa: BLE001 - the type and text are compared
            msgs[name] = (type(e).__name__, str(e).split("\n")[0])
    return msgs
