"""``framework.nn.functional``: functional forms of the nn layers.

The elementwise activations (relu, gelu, silu, softplus, elu, leaky_relu, hardtanh, ...)
are declared in framework/ops.yaml under the ``nn.functional`` namespace and bound here by
the dispatcher when ``framework`` is imported.
"""
