"""CPU launchers: reduction family."""
