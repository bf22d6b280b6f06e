"""framework.nn.backends (PyTorch's ``torch.nn.backends``): kept for old pickles."""
