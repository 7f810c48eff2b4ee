"""The Textual app (DESIGN §6): a thin shell over the core; it computes nothing the core does."""
