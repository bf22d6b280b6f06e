"""nn utilities (PyTorch's ``torch.nn.utils``)."""
