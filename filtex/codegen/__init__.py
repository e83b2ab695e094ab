"""What every engine that writes Python source shares (the row engine now,
numba kernels next): the source writer."""
