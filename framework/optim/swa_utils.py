"""Stochastic weight averaging (PyTorch's ``torch.optim.swa_utils``)."""
