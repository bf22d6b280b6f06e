"""GradScaler (being written)."""


class GradScaler:
    def __init__(self, *args, **kwargs):
        raise NotImplementedError("GradScaler")
