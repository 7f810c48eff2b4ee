"""The store (DESIGN §5 "Writing", §7 shell): files, checks and atomic writes around the core."""
