"""Elastic launch support (``torch.distributed.elastic``): the error reporting that
torchrun scripts use (``multiprocessing.errors.record``)."""
