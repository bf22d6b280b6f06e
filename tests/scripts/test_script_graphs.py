"""Graph neural network, point-cloud, recommender and sparse research scripts, run unchanged
under the framework and PyTorch.

The bodies (graph_workloads.py, graph_repo_workloads.py, sparse_workloads.py) are plain
PyTorch in the idioms of research code that writes PyG-style message passing by hand:
GCN/GAT/GraphSAGE/GIN with index_add_/scatter_reduce/sparse.mm aggregation, graph
mini-batching, point-cloud sampling and grouping (PointNet, DGCNN, PointNet++), pygcn/pyGAT
with the legacy sparse types, matrix factorisation and LightGCN, the sparse tensor API and
PyTorch's scatter rules.
``compare`` runs each under both libraries from the same NumPy data and weights.
"""
import framework
from graph_repo_workloads import dgcnn_pointnet2_lightgcn, pygcn_pygat
from graph_workloads import gat_sage_gin, gcn, graph_batching, point_clouds
from script_harness import assert_same, compare, oracle
from sparse_workloads import recommender, scatter_errors, scatter_semantics, sparse_api


def _split_text(tree):
    """(tree without its str leaves, the str leaves by path): text is compared exactly."""
    texts = {}

    def walk(x, path):
        if isinstance(x, str):
            texts[path] = x
            return 0
        if isinstance(x, dict):
            return {k: walk(v, f"{path}[{k!r}]") for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(x)]
        return x

    return walk(tree, "result"), texts


def compare_texts(run, device="cpu", **kwargs):
    """compare() for results holding text; the framework side runs on ``device``."""
    want, want_txt = _split_text(run(oracle(), **kwargs))
    on_device = {} if device == "cpu" else {"device": device}
    got, got_txt = _split_text(run(framework, **on_device, **kwargs))
    assert got_txt == want_txt
    assert_same(got, want)


def test_gcn_by_hand(device):
    if device == "cpu":
        compare(gcn)
    else:
        # the framework side runs on the device, PyTorch on cpu
        want = gcn(oracle(), steps=2, aggrs=("index_add", "sparse"))
        got = gcn(framework, device=device, steps=2, aggrs=("index_add", "sparse"))
        assert_same(got, want)


def test_gat_sage_gin():
    compare(gat_sage_gin)


def test_graph_batching():
    compare(graph_batching)


def test_point_clouds():
    compare(point_clouds)


def test_recommender():
    compare(recommender)


def test_sparse_api():
    compare(sparse_api)


def test_scatter_semantics(device):
    # on the device, int64 only (and the float gradients): the interpreter is slow
    compare_texts(scatter_semantics, device=device, int_only=device != "cpu")


def test_scatter_errors():
    want = scatter_errors(oracle())
    got = scatter_errors(framework)
    assert got == want


def test_pygcn_pygat():
    compare_texts(pygcn_pygat)


def test_dgcnn_pointnet2_lightgcn():
    compare(dgcnn_pointnet2_lightgcn)


def test_sparse_checkpoint_across_libraries(tmp_path):
    """A sparse tensor saved by either library loads in the other (PyTorch's pickle form)."""
    torch = oracle()
    i, v = [[0, 1, 1], [2, 0, 0]], [1., 2., 3.]
    for saver, loader in ((framework, torch), (torch, framework)):
        s = saver.sparse_coo_tensor(saver.tensor(i), saver.tensor(v), (2, 3))
        path = tmp_path / f"{saver.__name__}.pt"
        saver.save({"coo": s, "coalesced": s.coalesce(), "csr": s.coalesce().to_sparse_csr()},
                   path)
        got = loader.load(path, weights_only=True)
        assert not got["coo"].is_coalesced() and got["coalesced"].is_coalesced()
        assert got["csr"].layout is loader.sparse_csr
        for k in got:
            assert_same(got[k].to_dense(), s.to_dense())
