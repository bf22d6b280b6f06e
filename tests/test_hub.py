"""framework.hub and framework.utils.model_zoo without network access: local hubconf.py
repositories, the GitHub cache, and downloads from file:// URLs."""
import hashlib
import os
import textwrap
import urllib.error
import zipfile

import numpy as np
import pytest

import framework as fw
import framework.hub as hub
import framework.utils.model_zoo as model_zoo

HUBCONF = textwrap.dedent('''
    """A test hub."""
    dependencies = ["numpy"]
    import helper_module  # the repository's own module: its directory is on sys.path


    def tiny(scale=1.0, *, bias=0.0):
        """Builds a tiny thing."""
        return helper_module.make(scale, bias)


    def _private():
        pass


    not_callable = 3
''')


def _repo(path, hubconf=HUBCONF):
    path.mkdir(parents=True, exist_ok=True)
    (path / "hubconf.py").write_text(hubconf)
    (path / "helper_module.py").write_text(
        "import framework\n\ndef make(scale, bias):\n"
        "    return framework.full((2,), scale) + bias\n")
    return str(path)


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory, and no network: any URL other than file:// fails the test."""
    monkeypatch.setattr(hub, "_hub_dir", None)
    hub.set_dir(str(tmp_path / "hub"))
    real = hub.urlopen

    def offline(req, *args, **kwargs):
        url = req if isinstance(req, str) else req.full_url
        if not url.startswith("file:"):
            raise urllib.error.URLError(f"no network in tests: {url}")
        return real(req, *args, **kwargs)

    monkeypatch.setattr(hub, "urlopen", offline)
    return tmp_path / "hub"


def test_get_dir_follows_torch_home(monkeypatch, tmp_path):
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub")
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
    torch = pytest.importorskip("torch")
    import torch.hub
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    assert hub.get_dir() == torch.hub.get_dir()
    hub.set_dir("~/somewhere")
    assert hub.get_dir() == os.path.expanduser("~/somewhere")


def test_local_list_help_load(tmp_path):
    repo = _repo(tmp_path / "repo")
    assert hub.list(repo, source="local") == ["tiny"]
    assert hub.help(repo, "tiny", source="local") == "Builds a tiny thing."
    out = hub.load(repo, "tiny", 2.0, source="local", bias=0.5)
    assert out.tolist() == [2.5, 2.5]
    assert hub.load(repo, "tiny", source="LOCAL").tolist() == [1.0, 1.0]


def test_local_errors(tmp_path):
    repo = _repo(tmp_path / "repo")
    with pytest.raises(ValueError, match='Unknown source: "ftp". Allowed values: "github" '
                                         r'\| "local".'):
        hub.load(repo, "tiny", source="ftp")
    with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
        hub.load(repo, "missing", source="local")
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
        hub.load(repo, "not_callable", source="local")
    with pytest.raises(ValueError, match="model should be a string of function name"):
        hub.load(repo, 3, source="local")
    repo2 = _repo(tmp_path / "repo2",
                  HUBCONF.replace('["numpy"]', '["numpy", "no_such_pkg_a", "no_such_pkg_b"]'))
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_pkg_a, no_such_pkg_b"):
        hub.load(repo2, "tiny", source="local")


def test_github_uses_the_cache_without_network(hub_dir, capsys):
    _repo(hub_dir / "someone_models_main")
    assert hub.load("someone/models:main", "tiny", 3.0, trust_repo=True).tolist() == [3.0, 3.0]
    assert "Using cache found in" in capsys.readouterr().err
    assert hub.list("someone/models:main", trust_repo=True) == ["tiny"]
    # no ref given and no network: the cached default branch is used
    assert hub.load("someone/models", "tiny", trust_repo=True, verbose=False).tolist() == \
        [1.0, 1.0]
    # a branch with "/" is cached under "_"
    _repo(hub_dir / "someone_models_feature_x")
    assert hub.load("someone/models:feature/x", "tiny", trust_repo=True).tolist() == [1.0, 1.0]


def test_github_without_cache_or_network_raises(hub_dir):
    with pytest.raises(RuntimeError, match="no internet connection and the repo could not be "
                                           "found in the cache"):
        hub.load("someone/absent", "tiny", trust_repo=True)
    with pytest.raises(RuntimeError, match="could not download someone/absent:main"):
        hub.load("someone/absent:main", "tiny", trust_repo=True)


def test_github_trust_prompt(hub_dir, monkeypatch):
    _repo(hub_dir / "someone_models_main")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.load("someone/models:main", "tiny", trust_repo=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
    with pytest.raises(ValueError, match="Unrecognized response maybe."):
        hub.load("someone/models:main", "tiny", trust_repo=False)
    # a repository already downloaded counts as trusted under "check"
    assert hub.load("someone/models:main", "tiny", trust_repo="check").tolist() == [1.0, 1.0]


def _file_url(path):
    return "file://" + str(path)


def test_download_url_to_file_and_hash(tmp_path):
    src = tmp_path / "data.bin"
    payload = bytes(range(256)) * 700          # a few read chunks
    src.write_bytes(payload)
    digest = hashlib.sha256(payload).hexdigest()
    dst = tmp_path / "out.bin"
    hub.download_url_to_file(_file_url(src), str(dst), hash_prefix=digest[:10],
                             progress=False)
    assert dst.read_bytes() == payload
    bad = tmp_path / "bad.bin"
    with pytest.raises(RuntimeError, match=f'invalid hash value \\(expected "0000", got '
                                           f'"{digest}"\\)'):
        hub.download_url_to_file(_file_url(src), str(bad), hash_prefix="0000", progress=False)
    assert not bad.exists()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


def _state_dict():
    return {"weight": fw.tensor(np.arange(6.0).reshape(2, 3)), "bias": fw.tensor([1.0, -1.0])}


def test_load_state_dict_from_url_caches(hub_dir, tmp_path, monkeypatch):
    src = tmp_path / "src" / "model.pth"
    src.parent.mkdir()
    fw.save(_state_dict(), str(src))
    sd = hub.load_state_dict_from_url(_file_url(src), progress=False)
    cached = hub_dir / "checkpoints" / "model.pth"
    assert cached.exists()
    assert sd["weight"].tolist() == _state_dict()["weight"].tolist()
    assert sd["bias"].tolist() == [1.0, -1.0]

    def no_download(*args, **kwargs):
        raise AssertionError("downloaded again")

    monkeypatch.setattr(hub, "download_url_to_file", no_download)
    mtime = cached.stat().st_mtime_ns
    src.unlink()                              # the cache alone must serve the second call
    again = model_zoo.load_url(_file_url(src))
    assert again["bias"].tolist() == [1.0, -1.0] and cached.stat().st_mtime_ns == mtime


def test_load_state_dict_from_url_options(hub_dir, tmp_path):
    payload_path = tmp_path / "payload.pth"
    fw.save(_state_dict(), str(payload_path))
    digest = hashlib.sha256(payload_path.read_bytes()).hexdigest()
    good = tmp_path / f"weights-{digest[:8]}.pth"
    good.write_bytes(payload_path.read_bytes())
    model_dir = tmp_path / "models"
    sd = hub.load_state_dict_from_url(_file_url(good), model_dir=str(model_dir),
                                      check_hash=True, progress=False, map_location="cpu")
    assert sd["bias"].tolist() == [1.0, -1.0] and (model_dir / good.name).exists()
    bad = tmp_path / "weights-deadbeef.pth"
    bad.write_bytes(payload_path.read_bytes())
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(_file_url(bad), model_dir=str(model_dir),
                                     check_hash=True, progress=False)
    assert not (model_dir / bad.name).exists()
    # file_name renames the cached copy
    hub.load_state_dict_from_url(_file_url(payload_path), file_name="renamed.pt",
                                 progress=False)
    assert (hub_dir / "checkpoints" / "renamed.pt").exists()


def test_legacy_zip_and_torch_saved_weights(hub_dir, tmp_path):
    inner = tmp_path / "inner.pth"
    fw.save(_state_dict(), str(inner))
    archive = tmp_path / "legacy.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(inner, "inner.pth")
    with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
        sd = hub.load_state_dict_from_url(_file_url(archive), progress=False)
    assert sd["weight"].tolist() == _state_dict()["weight"].tolist()
    torch = pytest.importorskip("torch")
    theirs = tmp_path / "theirs.pth"
    torch.save({"w": torch.arange(4.0)}, str(theirs))
    sd = hub.load_state_dict_from_url(_file_url(theirs), progress=False, weights_only=True)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0, 3.0]


def test_signatures_match_torch():
    torch = pytest.importorskip("torch")
    import inspect

    import torch.hub
    import torch.utils.model_zoo
    for name in ("get_dir", "set_dir", "load", "download_url_to_file",
                 "load_state_dict_from_url"):
        ours = inspect.signature(getattr(hub, name)).parameters
        theirs = inspect.signature(getattr(torch.hub, name)).parameters
        assert list(ours) == list(theirs), name
        assert [p.default for p in ours.values()] == [p.default for p in theirs.values()]
    for name in ("list", "help"):   # ours add a keyword-only source="github"
        ours = inspect.signature(getattr(hub, name)).parameters
        theirs = inspect.signature(getattr(torch.hub, name)).parameters
        assert list(ours)[:-1] == list(theirs), name
    assert model_zoo.load_url is hub.load_state_dict_from_url
