"""framework.fx.experimental: ``proxy_tensor.make_fx`` (torch.fx.experimental)."""
