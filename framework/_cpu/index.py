"""CPU launchers: index family."""
