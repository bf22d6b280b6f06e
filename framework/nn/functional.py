"""Functional forms of the nn layers (PyTorch's ``torch.nn.functional``). Ops declared in
ops.yaml under the ``nn.functional`` namespace (``pad``, ...) are bound here by the
dispatcher."""
