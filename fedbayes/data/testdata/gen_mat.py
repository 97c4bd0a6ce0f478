# Writes the small reference MAT v5 files used by mat_test.go, with SciPy's own writer
# (an independent implementation of the format). Run with Debian's python3 (scipy 1.10):
#   /usr/bin/python3 gen_mat.py
import numpy as np
import scipy.io as sio

# A 4-D uint8 array in SVHN's layout [H, W, C, N] and a double label column with 10 for digit 0.
x = (np.arange(4 * 3 * 3 * 2, dtype=np.int64) * 7 % 256).astype(np.uint8).reshape(4, 3, 3, 2)
y = np.array([[10.0], [3.0]])
for compress in (False, True):
    name = "svhn_like_%s.mat" % ("zlib" if compress else "plain")
    sio.savemat(name, {"X": x, "y": y, "note": "fedbayes test", "m": np.array([[1.5, -2.0, 3.25], [4.0, 5.5, -6.75]]),
                       "i16": np.array([-3, 0, 300], dtype=np.int16)},
                do_compression=compress, format="5")
