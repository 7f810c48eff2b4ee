"""`python -m tests.differential --runtime adk|claude_code --scenarios N --seed S`: a differential campaign."""

import sys

from tests.differential.campaign import main

sys.exit(main())
