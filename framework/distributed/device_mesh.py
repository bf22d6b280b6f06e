"""``DeviceMesh``: the ranks laid out as an n-dimensional array, one process group per
mesh dimension (PyTorch's ``torch.distributed.device_mesh``).

Every rank of the default group builds the mesh (the groups are made with ``new_group``,
which all ranks call, in the same order). Slicing a mesh by dimension names
(``mesh["dp"]``) gives the sub-mesh that holds this rank, reusing the parent's groups.
"""
import numpy as np

from .process_group import GroupMember, _default_group, get_rank, get_world_size, new_group

__all__ = ["DeviceMesh", "init_device_mesh"]


def _as_array(mesh):
    from .._tensor import Tensor
    if isinstance(mesh, Tensor):
        mesh = mesh.detach().cpu().tolist()
    arr = np.asarray(mesh)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"DeviceMesh: mesh must hold integer ranks, got {arr.dtype}")
    return arr.astype(np.int64)


class DeviceMesh:
    """``DeviceMesh(device_type, mesh, *, mesh_dim_names=None)``: ``mesh`` (a tensor or
    nested list of global ranks) with optional names for its dimensions."""

    def __init__(self, device_type, mesh, *, mesh_dim_names=None, _init_backend=True,
                 _groups=None):
        arr = _as_array(mesh)
        if arr.ndim == 0:
            raise ValueError("DeviceMesh: mesh must have at least one dimension")
        flat = arr.reshape(-1).tolist()
        if len(set(flat)) != len(flat):
            raise RuntimeError(f"DeviceMesh cannot have duplicate values, but found {flat}")
        if mesh_dim_names is not None:
            mesh_dim_names = tuple(mesh_dim_names)
            if len(mesh_dim_names) != arr.ndim:
                raise ValueError(f"mesh_dim_names {mesh_dim_names} must have one name per "
                                 f"mesh dimension ({arr.ndim})")
            if len(set(mesh_dim_names)) != len(mesh_dim_names):
                raise RuntimeError("Each mesh_dim_name must be unique. Found repeated "
                                   f"mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        self.device_type = str(device_type)
        self._arr = arr
        self._mesh_dim_names = mesh_dim_names
        me = get_rank()
        hits = np.argwhere(arr == me)
        self._coordinate = tuple(int(c) for c in hits[0]) if len(hits) else None
        if _groups is not None:
            self._groups = list(_groups)
        elif _init_backend:
            self._groups = self._make_groups()

    def _make_groups(self):
        """One group per dimension: every 1-D slice along it becomes a ``new_group`` (all
        ranks create all of them, in the same order); this rank keeps the one it is in."""
        world = get_world_size()
        for r in self._arr.reshape(-1).tolist():
            if not 0 <= r < world:
                raise ValueError(f"DeviceMesh: rank {r} is outside the world of size {world}")
        groups = []
        for dim in range(self._arr.ndim):
            moved = np.moveaxis(self._arr, dim, -1).reshape(-1, self._arr.shape[dim])
            mine = None
            for row in moved.tolist():
                if self._arr.ndim == 1 and row == list(range(world)):
                    pg = _default_group()       # the whole world: the default group
                else:
                    pg = new_group(row)
                if self._coordinate is not None and get_rank() in row:
                    mine = pg
            groups.append(mine)
        return groups

    # ---- shape -----------------------------------------------------------------------
    @property
    def mesh(self):
        """The global ranks, as an int64 cpu tensor shaped like the mesh."""
        from .._ops import creation
        from .. import int64
        return creation.tensor(self._arr.tolist(), dtype=int64)

    @property
    def mesh_dim_names(self):
        return self._mesh_dim_names

    @property
    def ndim(self):
        return self._arr.ndim

    @property
    def shape(self):
        return tuple(int(s) for s in self._arr.shape)

    def size(self, mesh_dim=None):
        """The number of ranks in the mesh, or along ``mesh_dim``."""
        if mesh_dim is None:
            return int(self._arr.size)
        return int(self._arr.shape[self._dim(mesh_dim)])

    def _dim(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if not self._mesh_dim_names:
                raise KeyError("No `mesh_dim_names` found.")
            if mesh_dim not in self._mesh_dim_names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh "
                               f"dimensions are: mesh_dim_names={self._mesh_dim_names}")
            return self._mesh_dim_names.index(mesh_dim)
        d = int(mesh_dim)
        if not -self.ndim <= d < self.ndim:
            raise IndexError(f"mesh_dim {mesh_dim} is out of range for a {self.ndim}-D "
                             "DeviceMesh")
        return d % self.ndim

    def _need_dim(self, mesh_dim):
        if mesh_dim is None:
            if self.ndim > 1:
                raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions",
                                   "Optional kwarg `mesh_dim` needs to be specified when "
                                   "device_mesh.ndim > 1.")
            return 0
        return self._dim(mesh_dim)

    # ---- groups and ranks ---------------------------------------------------------------
    def get_group(self, mesh_dim=None):
        """The process group of ``mesh_dim`` (a name or an index; optional for a 1-D
        mesh) that holds this rank."""
        if not hasattr(self, "_groups"):
            raise RuntimeError("DeviceMesh process groups not initialized!")
        return self._groups[self._need_dim(mesh_dim)]

    def get_all_groups(self):
        """This rank's group of every dimension."""
        return [self.get_group(d) for d in range(self.ndim)]

    def get_rank(self):
        """This process's global rank."""
        return get_rank()

    def get_local_rank(self, mesh_dim=None):
        """This rank's index along ``mesh_dim`` (its rank in that dimension's group)."""
        d = self._need_dim(mesh_dim)
        if self._coordinate is None:
            return -1
        return self._coordinate[d]

    def get_coordinate(self):
        """This rank's index along every dimension, or None when it is not in the mesh."""
        return self._coordinate

    # ---- slicing ------------------------------------------------------------------------
    def __getitem__(self, mesh_dim_names):
        """The sub-mesh of the named dimensions that holds this rank."""
        if not self._mesh_dim_names:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        names = (mesh_dim_names,) if isinstance(mesh_dim_names, str) else \
            tuple(mesh_dim_names)
        if names == self._mesh_dim_names:
            return self
        if not all(n in self._mesh_dim_names for n in names) or len(set(names)) != \
                len(names):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names "
                           f"are {list(self._mesh_dim_names)}.")
        dims = [self._mesh_dim_names.index(n) for n in names]
        if dims != sorted(dims):
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Mesh dim indices "
                           "should be in ascending order.")
        if self._coordinate is None:
            raise RuntimeError("DeviceMesh: this rank is not in the mesh, so it has no "
                               "sub-mesh to slice")
        index = tuple(slice(None) if d in dims else self._coordinate[d]
                      for d in range(self.ndim))
        sub = self._arr[index]
        return DeviceMesh(self.device_type, sub, mesh_dim_names=names,
                          _groups=[self._groups[d] for d in dims])

    def __repr__(self):
        names = f", mesh_dim_names={self._mesh_dim_names}" if self._mesh_dim_names else ""
        return f"DeviceMesh('{self.device_type}', {self._arr.tolist()}{names})"

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and self.device_type == other.device_type \
            and self._arr.tolist() == other._arr.tolist() and \
            self._mesh_dim_names == other._mesh_dim_names

    def __hash__(self):
        return hash((self.device_type, str(self._arr.tolist()), self._mesh_dim_names))


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A ``DeviceMesh`` of shape ``mesh_shape`` over ranks ``0..world-1`` in row-major
    order (every rank of the default group calls it)."""
    mesh_shape = tuple(int(s) for s in mesh_shape)
    if mesh_dim_names is not None:
        mesh_dim_names = tuple(mesh_dim_names)
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError("Each mesh_dim_name must be unique. Found repeated "
                               f"mesh_dim_name in mesh_dim_names {mesh_dim_names}")
        if len(mesh_shape) != len(mesh_dim_names):
            raise RuntimeError("mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and "
                               f"len(mesh_shape):{len(mesh_shape)}.")
    if backend_override is not None:
        raise NotImplementedError("init_device_mesh: backend_override is not supported")
    device_type = str(device_type)
    if device_type and not device_type.isalpha():
        raise RuntimeError(f"Device type with index is not supported but got {device_type}. ",
                           "If you maintained a 'torch.device' object, it's recommended to "
                           "pass in 'device.type'.")
    if GroupMember.WORLD is None:
        raise ValueError("init_device_mesh: the default process group has not been "
                         "initialized, please call init_process_group first")
    world = get_world_size()
    n = int(np.prod(mesh_shape)) if mesh_shape else 1
    if n != world:
        raise RuntimeError(f"init_device_mesh: mesh_shape {mesh_shape} holds {n} ranks but "
                           f"the world has {world}")
    arr = np.arange(world, dtype=np.int64).reshape(mesh_shape)
    return DeviceMesh(device_type, arr, mesh_dim_names=mesh_dim_names)
