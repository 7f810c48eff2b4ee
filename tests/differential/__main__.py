"""`python -m tests.differential --runtime adk|pi --scenarios N --seed S`: a differential campaign."""

import sys

from tests.differential.campaign import main

sys.exit(main())
