"""``framework.hub``: PyTorch's ``torch.hub``: models from a repository's ``hubconf.py``
and weights downloaded once into a cache.

The cache directory is PyTorch's: ``$TORCH_HOME/hub``, where ``$TORCH_HOME`` defaults to
``$XDG_CACHE_HOME/torch`` (``~/.cache/torch``), so weights and repositories that PyTorch
already downloaded are found without downloading again (``set_dir`` changes it). A GitHub
repository is used from the cache when present there (``<owner>_<repo>_<branch>``); only
otherwise is it downloaded, and a download that fails raises with the URL and the cache
path in the message.
"""
import contextlib
import errno
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")

_hub_dir = None


def _get_torch_home():
    return os.path.expanduser(os.getenv(
        ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR),
                                     "torch")))


def get_dir():
    """The hub cache directory, for downloaded repositories and weights: the one given to
    ``set_dir``, else ``$TORCH_HOME/hub`` (``$TORCH_HOME`` defaults to
    ``$XDG_CACHE_HOME/torch``, ``$XDG_CACHE_HOME`` to ``~/.cache``)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    """Sets the hub cache directory (``~`` is expanded)."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# -- hubconf.py ---------------------------------------------------------------------------

@contextlib.contextmanager
def _on_sys_path(path):
    # hubconf.py imports its repository's own modules
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    if spec is None or spec.loader is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [name for name in getattr(module, VAR_DEPENDENCY, None) or ()
               if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return fn


# -- GitHub repositories --------------------------------------------------------------------

def _parse_repo_info(github):
    repo_info, ref = github.split(":") if ":" in github else (github, None)
    owner, name = repo_info.split("/")
    if ref is None:
        # the default branch: main if it exists, else master; offline, whichever is cached
        try:
            with urlopen(f"https://github.com/{owner}/{name}/tree/main/", timeout=10):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except (URLError, OSError) as e:
            for candidate in ("main", "master"):
                if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{candidate}")):
                    ref = candidate
                    break
            else:
                raise RuntimeError("It looks like there is no internet connection and the "
                                   f"repo could not be found in the cache ({get_dir()})") from e
    return owner, name, ref


def _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    trusted = ()
    if os.path.exists(path):
        with open(path) as f:
            trusted = tuple(line.strip() for line in f)
    owner_name = f"{owner}_{name}"
    # a repository already downloaded counts as trusted, as in PyTorch
    is_trusted = (owner_name in trusted or owner in _TRUSTED_REPO_OWNERS
                  or os.path.isdir(os.path.join(hub_dir, owner_name_branch)))
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         "repositories and as such cannot be downloaded. Do you trust this "
                         "repository and wish to add it to the trusted list of repositories "
                         "(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                         skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    # a branch may contain "/", which cannot be in a directory name
    branch = ref.replace("/", "_")
    owner_name_branch = f"{owner}_{name}_{branch}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    archive = os.path.join(hub_dir, branch + ".zip")
    if os.path.exists(archive):
        os.remove(archive)
    sys.stdout.write(f'Downloading: "{url}" to {archive}\n')
    try:
        download_url_to_file(url, archive, progress=False)
    except (URLError, OSError) as e:
        raise RuntimeError(f"framework.hub: could not download {github} from {url} ({e}); "
                           f"a copy placed at {repo_dir} is used without downloading") from e
    with zipfile.ZipFile(archive) as zf:
        top = zf.infolist()[0].filename
        extracted = os.path.join(hub_dir, top)
        _remove(extracted)
        _safe_extract(zf, hub_dir)
    os.remove(archive)
    _remove(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _remove(path):
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.isdir(path):
        shutil.rmtree(path)


def _safe_extract(zf, dest):
    """Extracts a zip archive, refusing members that would land outside ``dest``."""
    root = os.path.realpath(dest)
    for member in zf.infolist():
        name = member.filename
        if os.path.isabs(name) or name.startswith(("/", "\\")):
            raise ValueError(f"Archive entry has absolute path: {name}")
        target = os.path.realpath(os.path.join(root, name))
        if os.path.commonpath([root, target]) != root:
            raise ValueError(f"Archive entry escapes the target directory: {name}")
    zf.extractall(dest)


def _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose, skip_validation):
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "local":
        return repo_or_dir
    return _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                skip_validation=skip_validation)


def list(github, force_reload=False, skip_validation=False, trust_repo="check",
         verbose=True, *, source="github"):
    """The names of the entrypoints (public callables) of a repository's ``hubconf.py``.
    ``github``: "owner/repo[:ref]", or with ``source="local"`` a directory."""
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, verbose, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check", *,
         source="github"):
    """The docstring of entrypoint ``model`` of a repository's ``hubconf.py``."""
    repo_dir = _repo_dir(github, source, force_reload, trust_repo, True, skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
    return _entry(module, model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Loads a model: calls entrypoint ``model`` of the ``hubconf.py`` of a GitHub
    repository ("owner/repo[:ref]", ``source="github"``, cached under ``get_dir()``) or of a
    local directory (``source="local"``) with ``*args`` and ``**kwargs``, after checking
    the modules listed in its ``dependencies`` are installed."""
    repo_dir = _repo_dir(repo_or_dir, source, force_reload, trust_repo, verbose,
                         skip_validation)
    with _on_sys_path(repo_dir):
        module = _import_hubconf(repo_dir)
        return _entry(module, model)(*args, **kwargs)


# -- files --------------------------------------------------------------------------------

class _Progress:
    """A byte counter written to stderr (PyTorch uses tqdm when it is installed)."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done = total, enabled, 0

    def update(self, n):
        self.done += n
        if self.enabled:
            of = f" / {self.total}" if self.total else ""
            sys.stderr.write(f"\r{self.done}{of} bytes")

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Downloads ``url`` (any scheme urllib opens: http(s), ftp, file) to the file ``dst``.
    With ``hash_prefix``, the SHA256 digest of the download must start with it, else a
    RuntimeError is raised and ``dst`` is not written. The data goes to a temporary file
    beside ``dst`` first, so ``dst`` never holds a partial download."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp, "x+b")
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            length = u.info().get_all("Content-Length")
            bar = _Progress(int(length[0]) if length else None, progress)
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            while True:
                chunk = u.read(READ_DATA_CHUNK)
                if not chunk:
                    break
                f.write(chunk)
                if sha256 is not None:
                    sha256.update(chunk)
                bar.update(len(chunk))
            bar.close()
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    # PyTorch < 1.6 shipped weights as a zip archive holding one file
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            members = zf.infolist()
        return len(members) == 1 and not members[0].is_dir()
    return False


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Loads the object saved at ``url`` with ``framework.save``/``torch.save``, downloading
    it into ``model_dir`` (default ``get_dir()/checkpoints``) unless already there.

    ``check_hash``: the file name must read ``name-<sha256 prefix>.ext`` and the download
    must match that prefix. ``file_name``: the name to cache it under (default: the URL's).
    A zip archive holding one file (PyTorch's format before 1.6) is extracted first."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead",
                      stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            match = HASH_REGEX.search(filename)
            hash_prefix = match.group(1) if match else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        warnings.warn("Falling back to the old format < 1.6. This support will be deprecated "
                      "in favor of default zipfile format introduced in 1.6. Please redo "
                      "torch.save() to save it in the new zipfile format.", FutureWarning,
                      stacklevel=2)
        with zipfile.ZipFile(cached_file) as zf:
            _safe_extract(zf, model_dir)
            cached_file = os.path.join(model_dir, zf.infolist()[0].filename)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


load_url = load_state_dict_from_url
