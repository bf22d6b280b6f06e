"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler``)."""
