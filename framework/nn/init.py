"""Parameter initialisation (PyTorch's ``torch.nn.init``)."""
