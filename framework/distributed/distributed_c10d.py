"""``torch.distributed.distributed_c10d``: the process-group API under PyTorch's module
name, and ``_get_default_store``."""
from .process_group import *  # noqa: F401,F403
from .process_group import _NOT_INIT, GroupMember
from .collectives import *  # noqa: F401,F403
from .c10d_extras import *  # noqa: F401,F403
from .store import *  # noqa: F401,F403


def _get_default_store():
    """The key-value store of the default process group (store_init.py)."""
    if GroupMember.WORLD is None:
        raise ValueError(_NOT_INIT)
    if GroupMember.WORLD.store is None:
        raise RuntimeError("The default process group has no store: a rank could not connect "
                           "to rank 0's (see the warning of init_process_group); pass "
                           "init_method='tcp://host:port' or 'file://path', or store=")
    return GroupMember.WORLD.store
