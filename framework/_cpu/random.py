"""CPU launchers: random family."""
