"""Following sessions while their agents write them (issue 17): shell-side, no textual."""
