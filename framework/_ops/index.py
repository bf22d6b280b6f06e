"""Advanced indexing and index ops (gather, scatter, index_select, masked ops, ...)."""


def getitem(t, index):
    raise NotImplementedError("advanced indexing is not implemented yet")


def setitem(t, index, value):
    raise NotImplementedError("advanced indexing is not implemented yet")
