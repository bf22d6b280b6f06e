"""CPU launchers: linalg family."""
