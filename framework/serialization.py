"""framework.save / framework.load (being written)."""


def save(obj, f, pickle_module=None, pickle_protocol=2, _use_new_zipfile_serialization=True):
    raise NotImplementedError("framework.save")


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    raise NotImplementedError("framework.load")
