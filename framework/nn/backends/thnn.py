"""``torch.nn.backends.thnn``: named by old pickles of modules; not used otherwise."""


def _get_thnn_function_backend():
    pass
