"""Functional forms of the nn layers (PyTorch's ``torch.nn.functional``).

Ops declared in framework/ops.yaml under the ``nn.functional`` namespace (pad, relu, gelu,
silu, softplus, elu, leaky_relu, hardtanh, ...) are bound here by the dispatcher when
``framework`` is imported.
"""
