"""Packed and padded sequences for the recurrent layers (PyTorch's ``torch.nn.utils.rnn``)."""
