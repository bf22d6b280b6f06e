"""Graph, point-cloud and recommender script bodies in plain PyTorch (PyG-style message
passing written by hand), used by test_script_graphs.py.

Each ``run(torch, ...)`` reaches every name through the module it is given, so the same
body runs under the framework and under PyTorch.
"""
import numpy as np

from script_harness import data, init_params


def random_graph(torch, seed, n, e):
    """A directed edge list (2, E) int64 without self-loops, built in NumPy."""
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, size=e)
    dst = (src + rng.integers(1, n, size=e)) % n
    return torch.tensor(np.stack([src, dst]), dtype=torch.int64)


# --------------------------------------------------------------------------------------
# 1. GCN by hand: index_add_, scatter_add_ and sparse.mm aggregation
# --------------------------------------------------------------------------------------
def gcn(torch, device="cpu", n=14, e=48, f=5, hidden=8, classes=3, steps=3,
        aggrs=("index_add", "scatter_add", "sparse")):
    nn = torch.nn
    F = torch.nn.functional

    def gcn_norm(edge_index, num_nodes):
        loops = torch.arange(num_nodes, device=edge_index.device).repeat(2, 1)
        edge_index = torch.cat([edge_index, loops], dim=1)
        row, col = edge_index
        deg = torch.bincount(col, minlength=num_nodes).float()
        deg_inv_sqrt = deg.pow(-0.5)
        deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
        return edge_index, deg_inv_sqrt[row] * deg_inv_sqrt[col]

    class GCNConv(nn.Module):
        def __init__(self, fin, fout, aggr):
            super().__init__()
            self.lin = nn.Linear(fin, fout, bias=False)
            self.bias = nn.Parameter(torch.zeros(fout))
            self.aggr = aggr

        def forward(self, x, edge_index, norm):
            x = self.lin(x)
            row, col = edge_index
            n = x.size(0)
            if self.aggr == "sparse":
                adj = torch.sparse_coo_tensor(torch.stack([col, row]), norm, (n, n))
                return torch.sparse.mm(adj, x) + self.bias
            msg = norm.view(-1, 1) * x[row]
            if self.aggr == "index_add":
                out = torch.zeros_like(x).index_add_(0, col, msg)
            else:
                out = torch.zeros(n, x.size(1), device=x.device).scatter_add_(
                    0, col.unsqueeze(-1).expand_as(msg), msg)
            return out + self.bias

    class GCN(nn.Module):
        def __init__(self, aggr):
            super().__init__()
            self.conv1 = GCNConv(f, hidden, aggr)
            self.conv2 = GCNConv(hidden, classes, aggr)

        def forward(self, x, edge_index, norm):
            x = F.relu(self.conv1(x, edge_index, norm))
            x = F.dropout(x, p=0.5, training=False)
            return F.log_softmax(self.conv2(x, edge_index, norm), dim=1)

    x = data(torch, 1, n, f).to(device)
    y = data(torch, 2, n, kind="int", high=classes).to(device)
    edge_index = random_graph(torch, 3, n, e).to(device)
    # node n-1 gets only its self-loop: its in-degree is exercised at 1
    edge_index = edge_index[:, edge_index[1] != n - 1]
    train_mask = torch.zeros(n, dtype=torch.bool, device=device)
    train_mask[: n // 2] = True
    ei, norm = gcn_norm(edge_index, n)
    results = {"norm": norm}
    for aggr in aggrs:
        model = init_params(torch, GCN(aggr), seed=4).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        losses = []
        for _ in range(steps):
            model.train()
            opt.zero_grad()
            out = model(x, ei, norm)
            loss = F.nll_loss(out[train_mask], y[train_mask])
            loss.backward()
            losses.append(loss.item())
            opt.step()
        model.eval()
        with torch.no_grad():
            pred = model(x, ei, norm).argmax(dim=1)
        acc = int((pred[~train_mask] == y[~train_mask]).sum()) / int((~train_mask).sum())
        results[aggr] = [losses, acc, model.conv1.lin.weight.grad,
                         model.conv2.bias.grad, model.state_dict()]
    return results


# --------------------------------------------------------------------------------------
# 2. GAT (multi-head, scatter softmax), GraphSAGE mean/max, GIN
# --------------------------------------------------------------------------------------
def gat_sage_gin(torch, n=12, e=40, f=6, heads=2, ch=4, steps=2):
    nn = torch.nn
    F = torch.nn.functional

    def scatter_softmax(alpha, index, num_nodes):
        size = (num_nodes,) + tuple(alpha.shape[1:])
        idx = index.view(-1, *([1] * (alpha.dim() - 1))).expand_as(alpha)
        amax = torch.zeros(size).scatter_reduce(0, idx, alpha, reduce="amax",
                                                include_self=False)
        alpha = (alpha - amax[index]).exp()
        denom = torch.zeros(size).index_add_(0, index, alpha)
        return alpha / (denom[index] + 1e-16)

    class GATConv(nn.Module):
        def __init__(self, fin, c, h):
            super().__init__()
            self.h, self.c = h, c
            self.lin = nn.Linear(fin, h * c, bias=False)
            self.att_src = nn.Parameter(torch.empty(1, h, c))
            self.att_dst = nn.Parameter(torch.empty(1, h, c))
            self.bias = nn.Parameter(torch.empty(h * c))

        def forward(self, x, edge_index):
            n = x.size(0)
            src, dst = edge_index
            x = self.lin(x).view(-1, self.h, self.c)
            x_j, x_i = x[src], x[dst]
            alpha = (x_j * self.att_src).sum(-1) + (x_i * self.att_dst).sum(-1)
            alpha = F.leaky_relu(alpha, 0.2)
            alpha = scatter_softmax(alpha, dst, n)
            msg = x_j * alpha.unsqueeze(-1)
            out = torch.zeros(n, self.h, self.c).index_add_(0, dst, msg)
            return out.view(-1, self.h * self.c) + self.bias, alpha

    class SAGEConv(nn.Module):
        def __init__(self, fin, fout, aggr):
            super().__init__()
            self.aggr = aggr
            self.lin_l = nn.Linear(fin, fout)
            self.lin_r = nn.Linear(fin, fout, bias=False)

        def forward(self, x, edge_index):
            src, dst = edge_index
            idx = dst.unsqueeze(-1).expand(-1, x.size(1))
            agg = torch.zeros_like(x).scatter_reduce(0, idx, x[src], reduce=self.aggr,
                                                     include_self=False)
            out = self.lin_l(agg) + self.lin_r(x)
            return F.normalize(out, p=2., dim=-1)

    class GINConv(nn.Module):
        def __init__(self, fin, fout):
            super().__init__()
            self.mlp = nn.Sequential(nn.Linear(fin, fout), nn.BatchNorm1d(fout), nn.ReLU(),
                                     nn.Linear(fout, fout))
            self.eps = nn.Parameter(torch.Tensor([0.]))

        def forward(self, x, edge_index):
            src, dst = edge_index
            agg = torch.zeros_like(x)
            agg.index_add_(0, dst, x[src])
            return self.mlp((1 + self.eps) * x + agg)

    x = data(torch, 11, n, f)
    y = data(torch, 12, n, kind="int", high=3)
    edge_index = random_graph(torch, 13, n, e)
    edge_index = edge_index[:, edge_index[1] != 0]  # node 0 has no in-edges
    models = {"gat": GATConv(f, ch, heads), "sage_mean": SAGEConv(f, 3, "mean"),
              "sage_max": SAGEConv(f, 3, "amax"), "gin": GINConv(f, 3)}
    results = {}
    for name, conv in models.items():
        init_params(torch, conv, seed=14)
        head = init_params(torch, nn.Linear(heads * ch if name == "gat" else 3, 3), seed=15)
        opt = torch.optim.SGD(list(conv.parameters()) + list(head.parameters()), lr=0.1,
                              momentum=0.9)
        losses = []
        for _ in range(steps):
            opt.zero_grad()
            out = conv(x, edge_index)
            if name == "gat":
                out, att = out
                out = F.elu(out)
            loss = F.cross_entropy(head(out), y)
            loss.backward()
            losses.append(loss.item())
            opt.step()
        grads = {k: p.grad for k, p in conv.named_parameters()}
        results[name] = [losses, grads]
        if name == "gat":
            results["att"] = att
    return results


# --------------------------------------------------------------------------------------
# 3. Mini-batching graphs: batch vector, pooling, segment_csr, to_dense_batch
# --------------------------------------------------------------------------------------
def graph_batching(torch, f=4, classes=2, steps=3):
    nn = torch.nn
    F = torch.nn.functional
    rng = np.random.default_rng(21)
    sizes = [5, 3, 7, 4]
    xs, eis, offset = [], [], 0
    for i, s in enumerate(sizes):
        xs.append(data(torch, 30 + i, s, f))
        ei = random_graph(torch, 40 + i, s, 2 * s)
        eis.append(ei + offset)
        offset += s
    x = torch.cat(xs, dim=0)
    edge_index = torch.cat(eis, dim=1)
    counts = torch.tensor(sizes)
    batch = torch.repeat_interleave(counts)
    y = torch.from_numpy(rng.integers(0, classes, size=len(sizes)))
    num_graphs = int(batch.max()) + 1

    def global_mean_pool(h, batch, size):
        idx = batch.unsqueeze(-1).expand_as(h)
        return torch.zeros(size, h.size(1)).scatter_reduce(0, idx, h, reduce="mean",
                                                           include_self=False)

    def global_max_pool(h, batch, size):
        idx = batch.unsqueeze(-1).expand_as(h)
        return torch.full((size, h.size(1)), float("-inf")).scatter_reduce(
            0, idx, h, reduce="amax", include_self=True)

    def segment_sum_csr(h, ptr):
        # torch_scatter.segment_csr(reduce="sum") by a cumulative sum over the rows
        cs = torch.cat([h.new_zeros(1, h.size(1)), torch.cumsum(h, dim=0)], dim=0)
        return cs[ptr[1:]] - cs[ptr[:-1]]

    def to_dense_batch(h, batch, fill=0.):
        cnt = torch.bincount(batch)
        cum = torch.cat([cnt.new_zeros(1), cnt.cumsum(0)])
        max_n = int(cnt.max())
        idx = torch.arange(batch.numel()) - cum[batch] + batch * max_n
        out = h.new_full((cnt.numel() * max_n, h.size(1)), fill)
        out[idx] = h
        mask = torch.zeros(cnt.numel() * max_n, dtype=torch.bool)
        mask[idx] = True
        return out.view(cnt.numel(), max_n, h.size(1)), mask.view(cnt.numel(), max_n)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin1 = nn.Linear(f, 8)
            self.lin2 = nn.Linear(16, classes)

        def forward(self, x, edge_index, batch):
            src, dst = edge_index
            h = self.lin1(x)
            h = h + torch.zeros_like(h).index_add_(0, dst, h[src])
            h = F.relu(h)
            g = torch.cat([global_mean_pool(h, batch, num_graphs),
                           global_max_pool(h, batch, num_graphs)], dim=1)
            return self.lin2(g), h

    model = init_params(torch, Net(), seed=22)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out, h = model(x, edge_index, batch)
        loss = F.cross_entropy(out, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    ptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(counts, 0)])
    shuffled = torch.from_numpy(rng.permutation(batch.numel()))
    b2 = batch[shuffled]
    uniq, inverse, cnts = torch.unique(b2, return_counts=True, return_inverse=True)
    order = torch.argsort(b2, stable=True)
    dense, mask = to_dense_batch(h.detach(), batch)
    # the same pointer from float zeros (cat promotes to float), then torch's own segments
    ptr_f = torch.cat([torch.zeros(1), torch.cumsum(counts, 0)])
    seg_max = torch.segment_reduce(h.detach(), "max", offsets=ptr_f.long(), axis=0)
    return {"losses": losses, "ptr": ptr, "seg": segment_sum_csr(h.detach(), ptr),
            "ptr_f": [ptr_f, ptr_f.is_floating_point()], "seg_max": seg_max,
            "unique": [uniq, inverse, cnts], "order": order, "sorted": b2[order],
            "dense": dense, "mask": mask, "grad": model.lin1.weight.grad}


# --------------------------------------------------------------------------------------
# 4. Point clouds: kNN, FPS, ball query, EdgeConv, PointNet with T-Net
# --------------------------------------------------------------------------------------
def point_clouds(torch, b=2, n=16, k=4, n_sample=6, radius=0.9, max_nb=5):
    nn = torch.nn
    F = torch.nn.functional

    def knn(pos, k):
        dist = torch.cdist(pos, pos)
        return dist.topk(k, dim=-1, largest=False)[1]  # includes the point itself

    def farthest_point_sample(xyz, npoint):
        B, N, _ = xyz.shape
        centroids = torch.zeros(B, npoint, dtype=torch.long)
        distance = torch.ones(B, N) * 1e10
        farthest = torch.zeros(B, dtype=torch.long)
        batch_indices = torch.arange(B, dtype=torch.long)
        for i in range(npoint):
            centroids[:, i] = farthest
            centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
            dist = torch.sum((xyz - centroid) ** 2, -1)
            distance = torch.minimum(distance, dist)
            farthest = torch.argmax(distance, -1)
        return centroids

    def ball_query(radius, nsample, xyz, new_xyz):
        B, N, _ = xyz.shape
        S = new_xyz.shape[1]
        group_idx = torch.arange(N, dtype=torch.long).view(1, 1, N).repeat([B, S, 1])
        sqrdists = torch.cdist(new_xyz, xyz) ** 2
        group_idx[sqrdists > radius ** 2] = N
        group_idx = group_idx.sort(dim=-1)[0][:, :, :nsample]
        group_first = group_idx[:, :, 0].view(B, S, 1).repeat([1, 1, nsample])
        mask = group_idx == N
        group_idx[mask] = group_first[mask]
        return group_idx

    class EdgeConv(nn.Module):
        def __init__(self, fin, fout):
            super().__init__()
            self.mlp = nn.Sequential(nn.Linear(2 * fin, fout), nn.ReLU(),
                                     nn.Linear(fout, fout))

        def forward(self, x, idx):
            B, N, C = x.shape
            x_j = torch.gather(x.unsqueeze(1).expand(B, N, N, C), 2,
                               idx.unsqueeze(-1).expand(B, N, idx.size(-1), C))
            x_i = x.unsqueeze(2).expand_as(x_j)
            return self.mlp(torch.cat([x_i, x_j - x_i], dim=-1)).max(dim=2)[0]

    class TNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv1d(3, 8, 1)
            self.fc = nn.Linear(8, 9)

        def forward(self, x):
            B = x.size(0)
            x = torch.max(F.relu(self.conv1(x)), 2, keepdim=True)[0].view(-1, 8)
            iden = torch.eye(3).view(1, 9).repeat(B, 1)
            return (self.fc(x) + iden).view(-1, 3, 3)

    class PointNet(nn.Module):
        def __init__(self, classes=3):
            super().__init__()
            self.tnet = TNet()
            self.conv1 = nn.Conv1d(3, 8, 1)
            self.bn1 = nn.BatchNorm1d(8)
            self.conv2 = nn.Conv1d(8, 16, 1)
            self.fc = nn.Linear(16, classes)

        def forward(self, x):  # x: (B, 3, N)
            trans = self.tnet(x)
            x = torch.bmm(x.transpose(2, 1), trans).transpose(2, 1)
            x = F.relu(self.bn1(self.conv1(x)))
            x = self.conv2(x)
            x = torch.max(x, 2, keepdim=True)[0].view(-1, 16)
            return F.log_softmax(self.fc(x), dim=1), trans

    pos = data(torch, 51, b, n, 3, kind="uniform")
    idx = knn(pos, k)
    fps = farthest_point_sample(pos, n_sample)
    new_xyz = torch.gather(pos, 1, fps.unsqueeze(-1).expand(-1, -1, 3))
    groups = ball_query(radius, max_nb, pos, new_xyz)

    edge = init_params(torch, EdgeConv(3, 6), seed=52)
    feat = edge(pos, idx)
    feat.sum().backward()

    net = init_params(torch, PointNet(), seed=53)
    y = data(torch, 54, b, kind="int", high=3)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        out, trans = net(pos.transpose(2, 1))
        eye = torch.eye(3)[None, :, :]
        reg = torch.mean(torch.norm(torch.bmm(trans, trans.transpose(2, 1)) - eye, dim=(1, 2)))
        loss = F.nll_loss(out, y) + 0.001 * reg
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"knn": idx, "fps": fps, "groups": groups, "edge": feat,
            "edge_grad": edge.mlp[0].weight.grad, "losses": losses,
            "tnet_grad": net.tnet.fc.weight.grad}
