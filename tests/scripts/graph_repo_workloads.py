"""Script bodies in the idioms of well-known graph and point-cloud repositories (pygcn,
pyGAT, DGCNN, PointNet++, LightGCN), used by test_script_graphs.py: legacy sparse
constructors, dense attention masks and batched neighbour gathering."""
import math

import numpy as np

from script_harness import data, init_params


# --------------------------------------------------------------------------------------
# 8. pygcn (legacy sparse types, torch.spmm) and pyGAT (dense masked attention)
# --------------------------------------------------------------------------------------
def pygcn_pygat(torch, n=10, f=6, hidden=8, classes=3, steps=2):
    nn = torch.nn
    F = torch.nn.functional
    Parameter = torch.nn.parameter.Parameter
    rng = np.random.default_rng(81)

    # a row-normalised adjacency with self-loops, as pygcn's load_data builds it
    dense = (rng.random((n, n)) < 0.3).astype(np.float32)
    dense = np.maximum(dense, dense.T) + np.eye(n, dtype=np.float32)
    dense = dense / dense.sum(1, keepdims=True)
    row, col = np.nonzero(dense)

    def sparse_mx_to_torch_sparse_tensor(row, col, values, shape):
        indices = torch.from_numpy(np.vstack((row, col)).astype(np.int64))
        values = torch.from_numpy(values)
        shape = torch.Size(shape)
        return torch.sparse.FloatTensor(indices, values, shape)

    adj = sparse_mx_to_torch_sparse_tensor(row, col, dense[row, col], dense.shape)
    features = torch.FloatTensor(rng.standard_normal((n, f)).astype(np.float32))
    labels = torch.LongTensor(np.where(np.eye(classes)[rng.integers(0, classes, n)])[1])
    idx_train = torch.LongTensor(range(n // 2))

    class GraphConvolution(nn.Module):
        def __init__(self, in_features, out_features, bias=True):
            super().__init__()
            self.weight = Parameter(torch.FloatTensor(in_features, out_features))
            self.bias = Parameter(torch.FloatTensor(out_features)) if bias else None
            self.reset_parameters()

        def reset_parameters(self):
            stdv = 1. / math.sqrt(self.weight.size(1))
            self.weight.data.uniform_(-stdv, stdv)
            if self.bias is not None:
                self.bias.data.uniform_(-stdv, stdv)

        def forward(self, input, adj):
            support = torch.mm(input, self.weight)
            output = torch.spmm(adj, support)
            return output + self.bias if self.bias is not None else output

    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.gc1 = GraphConvolution(f, hidden)
            self.gc2 = GraphConvolution(hidden, classes)

        def forward(self, x, adj):
            x = F.relu(self.gc1(x, adj))
            x = F.dropout(x, 0.5, training=False)
            return F.log_softmax(self.gc2(x, adj), dim=1)

    class GraphAttentionLayer(nn.Module):
        def __init__(self, in_features, out_features, alpha=0.2, concat=True):
            super().__init__()
            self.out_features = out_features
            self.concat = concat
            self.W = nn.Parameter(torch.empty(size=(in_features, out_features)))
            nn.init.xavier_uniform_(self.W.data, gain=1.414)
            self.a = nn.Parameter(torch.empty(size=(2 * out_features, 1)))
            nn.init.xavier_uniform_(self.a.data, gain=1.414)
            self.leakyrelu = nn.LeakyReLU(alpha)

        def forward(self, h, adj):
            Wh = torch.mm(h, self.W)
            Wh1 = torch.matmul(Wh, self.a[:self.out_features, :])
            Wh2 = torch.matmul(Wh, self.a[self.out_features:, :])
            e = self.leakyrelu(Wh1 + Wh2.T)
            zero_vec = -9e15 * torch.ones_like(e)
            attention = torch.where(adj > 0, e, zero_vec)
            attention = F.softmax(attention, dim=1)
            h_prime = torch.matmul(attention, Wh)
            return F.elu(h_prime) if self.concat else h_prime

    class GAT(nn.Module):
        def __init__(self, nheads=2):
            super().__init__()
            self.attentions = [GraphAttentionLayer(f, 4) for _ in range(nheads)]
            for i, attention in enumerate(self.attentions):
                self.add_module('attention_{}'.format(i), attention)
            self.out_att = GraphAttentionLayer(4 * nheads, classes, concat=False)

        def forward(self, x, adj):
            x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
            return F.log_softmax(F.elu(self.out_att(x, adj)), dim=1)

    results = {}
    for name, model, graph in (("gcn", GCN(), adj), ("gat", GAT(), adj.to_dense())):
        init_params(torch, model, seed=82)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        losses = []
        for _ in range(steps):
            model.train()
            optimizer.zero_grad()
            output = model(features, graph)
            loss_train = F.nll_loss(output[idx_train], labels[idx_train])
            loss_train.backward()
            optimizer.step()
            losses.append(loss_train.item())
        preds = output.max(1)[1].type_as(labels)
        correct = preds.eq(labels).double().sum()
        results[name] = [losses, correct.item(), output]
    # the library's own name leads the type's name: compared without it
    results["types"] = [adj.type().split(".", 1)[1], isinstance(adj, torch.sparse.FloatTensor),
                        isinstance(adj, torch.FloatTensor), features.type().split(".", 1)[1],
                        isinstance(features, torch.sparse.FloatTensor)]
    return results


# --------------------------------------------------------------------------------------
# 9. DGCNN's get_graph_feature, PointNet++'s index_points, LightGCN's sparse dropout
# --------------------------------------------------------------------------------------
def dgcnn_pointnet2_lightgcn(torch, b=2, n=10, k=3, keep_prob=0.7):
    nn = torch.nn
    F = torch.nn.functional

    def knn(x, k):
        inner = -2 * torch.matmul(x.transpose(2, 1), x)
        xx = torch.sum(x ** 2, dim=1, keepdim=True)
        pairwise_distance = -xx - inner - xx.transpose(2, 1)
        return pairwise_distance.topk(k=k, dim=-1)[1]

    def get_graph_feature(x, k):
        batch_size, num_dims, num_points = x.size()
        idx = knn(x, k=k)
        idx_base = torch.arange(0, batch_size, device=x.device).view(-1, 1, 1) * num_points
        idx = (idx + idx_base).view(-1)
        x = x.transpose(2, 1).contiguous()
        feature = x.view(batch_size * num_points, -1)[idx, :]
        feature = feature.view(batch_size, num_points, k, num_dims)
        x = x.view(batch_size, num_points, 1, num_dims).repeat(1, 1, k, 1)
        return torch.cat((feature - x, x), dim=3).permute(0, 3, 1, 2).contiguous()

    class DGCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Sequential(nn.Conv2d(6, 8, kernel_size=1, bias=False),
                                       nn.BatchNorm2d(8), nn.LeakyReLU(negative_slope=0.2))
            self.conv2 = nn.Sequential(nn.Conv1d(8, 16, kernel_size=1, bias=False),
                                       nn.BatchNorm1d(16), nn.LeakyReLU(negative_slope=0.2))
            self.linear = nn.Linear(32, 4)

        def forward(self, x):
            x = self.conv1(get_graph_feature(x, k=k))
            x = x.max(dim=-1, keepdim=False)[0]
            x = self.conv2(x)
            x1 = F.adaptive_max_pool1d(x, 1).view(x.size(0), -1)
            x2 = F.adaptive_avg_pool1d(x, 1).view(x.size(0), -1)
            return self.linear(torch.cat((x1, x2), 1))

    def square_distance(src, dst):
        B, N, _ = src.shape
        _, M, _ = dst.shape
        dist = -2 * torch.matmul(src, dst.permute(0, 2, 1))
        dist += torch.sum(src ** 2, -1).view(B, N, 1)
        dist += torch.sum(dst ** 2, -1).view(B, 1, M)
        return dist

    def index_points(points, idx):
        B = points.shape[0]
        view_shape = list(idx.shape)
        view_shape[1:] = [1] * (len(view_shape) - 1)
        repeat_shape = list(idx.shape)
        repeat_shape[0] = 1
        batch_indices = torch.arange(B, dtype=torch.long).view(view_shape).repeat(repeat_shape)
        return points[batch_indices, idx, :]

    def farthest_point_sample(xyz, npoint, start):
        B, N, C = xyz.shape
        centroids = torch.zeros(B, npoint, dtype=torch.long)
        distance = torch.ones(B, N) * 1e10
        farthest = start  # torch.randint(0, N, (B,)) in the repository
        batch_indices = torch.arange(B, dtype=torch.long)
        for i in range(npoint):
            centroids[:, i] = farthest
            centroid = xyz[batch_indices, farthest, :].view(B, 1, 3)
            dist = torch.sum((xyz - centroid) ** 2, -1)
            mask = dist < distance
            distance[mask] = dist[mask]
            farthest = torch.max(distance, -1)[1]
        return centroids

    pts = data(torch, 91, b, 3, n)
    y = data(torch, 92, b, kind="int", high=4)
    model = init_params(torch, DGCNN(), seed=93)
    out = model(pts)
    loss = F.cross_entropy(out, y)
    loss.backward()

    xyz = pts.transpose(2, 1)
    fps_idx = farthest_point_sample(xyz, 4, torch.tensor([0, 3]))
    new_xyz = index_points(xyz, fps_idx)
    sqr = square_distance(new_xyz, xyz)
    group_idx = sqr.argsort(dim=-1)[:, :, :3]
    grouped = index_points(xyz, group_idx) - new_xyz.view(b, 4, 1, 3)

    # LightGCN's dropout of a sparse graph: keep masks from NumPy instead of torch.rand
    rng = np.random.default_rng(94)
    i = torch.from_numpy(np.stack([rng.integers(0, 6, 15), rng.integers(0, 6, 15)]))
    graph = torch.sparse.FloatTensor(i, torch.ones(15), torch.Size([6, 6])).coalesce()
    size = graph.size()
    index = graph.indices().t()
    values = graph.values()
    random_index = torch.from_numpy(rng.random(len(values)).astype(np.float32)) + keep_prob
    random_index = random_index.int().bool()
    index = index[random_index]
    values = values[random_index] / keep_prob
    dropped = torch.sparse.FloatTensor(index.t(), values, size)
    emb = data(torch, 95, 6, 2)
    return {"logits": out, "loss": loss.item(), "grad": model.conv1[0].weight.grad,
            "bn_mean": model.conv1[1].running_mean, "fps": fps_idx, "grouped": grouped,
            "dropped": torch.sparse.mm(dropped, emb), "kept": int(random_index.sum())}
