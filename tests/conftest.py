"""Shared test settings.

Statistical tests use fixed seeds and a stated false-alarm rate: a goodness-of-fit
test fails when its p-value is below ``ALPHA``, and a Monte Carlo mean fails when
it is more than ``Z`` standard errors from the exact value (two-sided false-alarm
rate about 6e-7 under the normal approximation).
"""

ALPHA = 1e-3
Z = 5.0
