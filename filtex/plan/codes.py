"""An atom's outcome for a row, as the kernels code it (one byte; a row's
verdict is the skeleton over its atoms' codes)."""
from __future__ import annotations

FALSE, TRUE, UNKNOWN, FAIL, BACK = 0, 1, 2, 4, 8
"""FALSE and TRUE; UNKNOWN (a NULL); FAIL (an amqp evaluation failure: the
whole filter is unknown); BACK (the row goes to the per-message engine)."""
