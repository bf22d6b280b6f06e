"""CPU launchers: sort family."""
