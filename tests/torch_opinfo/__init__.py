"""A walk over PyTorch's OpInfo database (tests/test_torch_opinfo.py, tools/opinfo_report.py)."""
