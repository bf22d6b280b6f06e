"""CPU launchers: shape family."""
